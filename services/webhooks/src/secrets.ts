import { randomBytes } from "node:crypto";

const PREFIX = "whsec_";
/** Bytes of a generated secret; a given one may have 24 to 64 (docs/webhooks.md). */
const GENERATED_BYTES = 32;
const MIN_BYTES = 24;
const MAX_BYTES = 64;

/** How long the secret a rotation replaced keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes (the Standard Webhooks form). */
export function generateSecret(): string {
  return `${PREFIX}${randomBytes(GENERATED_BYTES).toString("base64")}`;
}

/** Why a client-given secret is not acceptable, or null: `whsec_` + base64 of 24-64 bytes. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(PREFIX)) return "secret must start with whsec_";
  const encoded = secret.slice(PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    return "secret must be whsec_ followed by base64";
  }
  const bytes = Buffer.from(encoded, "base64").length;
  if (bytes < MIN_BYTES || bytes > MAX_BYTES) return `secret must encode ${MIN_BYTES} to ${MAX_BYTES} bytes`;
  return null;
}
