import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Values sealed with AES-256-GCM under keys derived (HKDF-SHA256) from secrets of the
 * environment, each derivation bound to one purpose, so that the same secret never keys two
 * uses. A sealer holds one or more keys named by a key id: the first seals, every one opens, so a
 * secret is rotated by putting the new one first, re-sealing what the old one sealed, then
 * dropping it. A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url); its key id is kept
 * beside it by the caller. `context`, when given, is authenticated with the value (GCM's
 * additional data), so that a sealed value copied to another row does not open there.
 */
export type Sealer = {
  /** The key id that `seal` uses. */
  readonly kid: string;
  seal(plain: string, context?: string): string;
  /** The plain text, or null: a key id it does not hold, another key, a change, another context. */
  open(sealed: string, kid: string, context?: string): string | null;
};

/** One secret of a sealer: its key id, and the secret its key is derived from. */
export type SealingSecret = { kid: string; secret: string };

const VERSION = "v1";
const IV_BYTES = 12;
/**
 * IVs are cut from a pool of random bytes refilled 256 IVs at a time: each IV is still 96 fresh
 * random bits used once (GCM's random IV construction), but one call into the CSPRNG serves 256
 * seals, where a call per seal was a large part of the seal's cost.
 */
const POOL_BYTES = IV_BYTES * 256;

/** The AES-256 key of one secret for one purpose. */
function derive(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "evalp", purpose, 32));
}

/** A sealer for `purpose` over `secrets` (at least one; the first seals). */
export function createSealer(purpose: string, secrets: readonly SealingSecret[]): Sealer {
  const [current] = secrets;
  if (!current) throw new Error("a sealer needs at least one secret");
  const keys = new Map(secrets.map(({ kid, secret }) => [kid, derive(secret, purpose)]));
  const sealingKey = keys.get(current.kid) as Buffer;
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
    kid: current.kid,
    seal(plain, context) {
      const iv = nextIv();
      const cipher = createCipheriv("aes-256-gcm", sealingKey, iv);
      if (context !== undefined) cipher.setAAD(Buffer.from(context, "utf8"));
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return [
        VERSION,
        iv.toString("base64url"),
        cipher.getAuthTag().toString("base64url"),
        sealed.toString("base64url"),
      ].join(".");
    },
    open(sealed, kid, context) {
      const key = keys.get(kid);
      const [version, iv, tag, body] = sealed.split(".");
      if (!key || version !== VERSION || !iv || !tag || body === undefined) return null;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
        if (context !== undefined) decipher.setAAD(Buffer.from(context, "utf8"));
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

/**
 * Reads a list of sealing secrets (`kid:secret,kid:secret`, key ids of letters, digits, `_` and
 * `-`, secrets of 32 characters or more; the first seals). Throws with what is wrong.
 */
export function parseSealingSecrets(setting: string, value: string): SealingSecret[] {
  const secrets = value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => {
      const at = part.indexOf(":");
      const kid = part.slice(0, at);
      const secret = part.slice(at + 1);
      if (at < 1 || !/^[A-Za-z0-9_-]{1,32}$/.test(kid) || secret.length < 32) {
        throw new Error(`${setting} entries must be <kid>:<secret of 32+ characters>`);
      }
      return { kid, secret };
    });
  if (secrets.length === 0) throw new Error(`${setting} is required: <kid>:<secret> pairs, the first seals`);
  if (new Set(secrets.map(({ kid }) => kid)).size !== secrets.length) {
    throw new Error(`${setting} names a key id twice`);
  }
  return secrets;
}
