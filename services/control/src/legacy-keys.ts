import { isUuid, type Scope } from "@evalp/kit";

/**
 * What a legacy key (LEGACY_API_KEYS) may do: the data an old integration moved — subjects,
 * bundles and templates, webhooks, answers, evaluations, analytics — in its one environment;
 * nothing of the organization (`org:*`, memberships), its keys, apps, quotas or audit trail.
 */
export const LEGACY_SCOPES: readonly Scope[] = [
  "subjects:write",
  "bundles:read",
  "bundles:write",
  "templates:write",
  "webhooks:read",
  "webhooks:write",
  "continuous:write",
  "evaluations:read",
  "evaluations:write",
  "analytics:read",
];

/**
 * Reads `LEGACY_API_KEYS`: comma-separated `<sha256 hex of the key>:<environment id>` pairs.
 * Only hashes are configured, never the keys themselves. Malformed entries stop the process at
 * start rather than silently locking out a migrating client.
 */
export function parseLegacyKeys(value: string): Map<string, string> {
  const keys = new Map<string, string>();
  for (const entry of value.split(",").map((part) => part.trim())) {
    if (!entry) continue;
    const [hash, environmentId, ...rest] = entry.split(":");
    if (!hash || !/^[0-9a-f]{64}$/i.test(hash) || !environmentId || !isUuid(environmentId) || rest.length) {
      throw new Error("LEGACY_API_KEYS entries must be <sha256 hex>:<environment uuid>");
    }
    keys.set(hash.toLowerCase(), environmentId);
  }
  return keys;
}
