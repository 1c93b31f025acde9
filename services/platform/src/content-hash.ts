import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/** `sha256:` + hex SHA-256 of the RFC 8785 canonical JSON of a content (docs/endpoints.md). */
export function contentHash(content: unknown): string {
  return `sha256:${createHash("sha256")
    .update(canonicalize(content) ?? "")
    .digest("hex")}`;
}

/** A bundle's fingerprint: the six content hashes in the interface's field order, joined by `\n`. */
export function bundleFingerprint(hashes: readonly string[]): string {
  return `sha256:${createHash("sha256").update(hashes.join("\n")).digest("hex")}`;
}

/** Structural equality of JSON values, as their canonical forms (key order does not matter). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalize(a) === canonicalize(b);
}
