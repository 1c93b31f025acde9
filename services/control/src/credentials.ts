import { createHash, randomInt } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform random base62 (crypto randomInt has no modulo bias). 32 chars carry ~190 bits. */
export function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)];
  return out;
}

/** Credentials are stored only as their SHA-256, so a database leak leaks no usable secret. */
export function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Access tokens (and the session cookie) are `evs_` + 43 base62 chars. */
export const ACCESS_TOKEN_PREFIX = "evs_";
export const API_KEY_PREFIX = "evk_";
export const API_KEY_PATTERN = /^evk_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/;

export function newAccessToken(): string {
  return `${ACCESS_TOKEN_PREFIX}${randomBase62(43)}`;
}

/** A new API key `evk_<8>_<32>` and its public prefix `evk_<8>` (docs/authentication.md). */
export function newApiKey(): { secret: string; prefix: string } {
  const prefix = `${API_KEY_PREFIX}${randomBase62(8)}`;
  return { secret: `${prefix}_${randomBase62(32)}`, prefix };
}
