import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Stored answers sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the server's
 * secret: an answer can hold a credential shown once (an API key's or a webhook's secret, an
 * access, participant or agent token), and a dump of Redis must reveal none. A record sealed under
 * another secret (rotated) does not open: it counts as absent.
 */
export type Seal = { seal(plain: string): string; open(sealed: string): string | null };

const VERSION = "v1";

export function createSeal(secret: string): Seal {
  const key = Buffer.from(hkdfSync("sha256", secret, "evalp", "idempotency records", 32));
  return {
    seal(plain) {
      const iv = randomBytes(12);
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
