import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Stored answers sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the server's
 * secret: an answer can hold a credential shown once (an API key's or a webhook's secret, an
 * access, participant or agent token), and a dump of Redis must reveal none. A record sealed under
 * another secret (rotated) does not open: it counts as absent.
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

const VERSION = "v1";
const IV_BYTES = 12;
/**
 * IVs are cut from a pool of random bytes refilled 256 IVs at a time: each IV is still 96 fresh
 * random bits used once (GCM's random IV construction), but one call into the CSPRNG serves 256
 * seals, where a call per seal was a large part of the seal's cost.
 */
const POOL_BYTES = IV_BYTES * 256;

export function createSeal(secret: string): Seal {
  const key = Buffer.from(hkdfSync("sha256", secret, "evalp", "idempotency records", 32));
  let pool = Buffer.alloc(0);
  let used = 0;
  const nextIv = (): Buffer => {
    if (used + IV_BYTES > pool.length) {
      pool = randomBytes(POOL_BYTES);
      used = 0;
    }
    used += IV_BYTES;
    // A copy, so that no later IV aliases memory a cipher may still hold.
    return Buffer.from(pool.subarray(used - IV_BYTES, used));
  };
  return {
    planeKey(id) {
      return Buffer.from(hkdfSync("sha256", secret, "evalp", `idempotency plane outcome ${id}`, 32)).toString(
        "base64url",
      );
    },
    seal(plain) {
      const iv = nextIv();
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        sealed.toString("base64url"),
      ].join(".");
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split(".");
      if (version !== VERSION || !iv || !tag || body === undefined) return null;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        decipher.setAuthTag(Buffer.from(tag, "base64url"));
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        return null;
      }
    },
  };
}
