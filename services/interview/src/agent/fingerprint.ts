import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level: equal values, equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${stableJson(inner)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The fingerprint of a command: SHA-256 of its canonical JSON. */
export function commandFingerprint(command: unknown): string {
  return createHash("sha256").update(stableJson(command)).digest("hex");
}
