import { hkdfSync } from "node:crypto";
import { createSealer } from "@evalp/kit";

/**
 * Stored answers sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the server's
 * secret (kit `createSealer`): an answer can hold a credential shown once (an API key's or a
 * webhook's secret, an access, participant or agent token), and a dump of Redis must reveal none.
 * A record sealed under another secret (rotated) does not open: it counts as absent.
 */
export type Seal = {
  seal(plain: string): string;
  open(sealed: string): string | null;
  /**
   * The key (base64url, 32 bytes) a plane seals its stored outcome of the key `id` with
   * (docs/idempotency.md): derived from the same secret and the key's identity, so only a
   * request under that key can have a plane's stored outcome opened, and a dump of a plane's
   * table reveals no answer.
   */
  planeKey(id: string): string;
};

/** The one key id of the records' sealer: the records live minutes, so none outlives a rotation. */
const KID = "jwt";

export function createSeal(secret: string): Seal {
  const sealer = createSealer("idempotency records", [{ kid: KID, secret }]);
  return {
    planeKey(id) {
      return Buffer.from(hkdfSync("sha256", secret, "evalp", `idempotency plane outcome ${id}`, 32)).toString(
        "base64url",
      );
    },
    seal: (plain) => sealer.seal(plain),
    open: (sealed) => sealer.open(sealed, KID),
  };
}
