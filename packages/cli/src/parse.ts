import { InvalidArgumentError } from "commander";

// Option parsers: a malformed value is commander's InvalidArgumentError, so it is reported as a
// usage error (exit 2) naming the option, before any request is made.

/** `--limit <n>` of a list: how many items to fetch at most. */
export function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError("expected a positive integer");
  return Number(value);
}

/** A quota limit's value (docs/endpoints.md: an integer 0-1,000,000,000). */
function limitValue(text: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text) || Number(text) > 1_000_000_000)
    throw new InvalidArgumentError(`"${text}" is not an integer from 0 to 1000000000`);
  return Number(text);
}

/** Repeated `--limit name=value` of `quotas set`, gathered into one object. */
export function limitPair(value: string, previous: Record<string, number> = {}): Record<string, number> {
  const match = /^([a-z_]+)=(.*)$/.exec(value);
  if (!match) throw new InvalidArgumentError(`expected name=value, got "${value}"`);
  const [, name = "", text = ""] = match;
  if (name in previous) throw new InvalidArgumentError(`"${name}" is given twice`);
  return { ...previous, [name]: limitValue(text) };
}

/** Repeated or comma-separated `--scope` values, in order, each once. */
export function scopeList(value: string, previous: string[] = []): string[] {
  const scopes = value
    .split(",")
    .map((scope) => scope.trim())
    .filter((scope) => scope !== "");
  if (scopes.length === 0) throw new InvalidArgumentError("expected a scope such as webhooks:read");
  return [...new Set([...previous, ...scopes])];
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A point in time as the API takes it (RFC 3339): a date or date-time, or a span back from `now`
 * such as `30m`, `24h` or `7d`, which is what an operator recovering failures usually means.
 */
export function pointInTime(value: string, now: () => Date = () => new Date()): string {
  const span = /^([0-9]+)([smhd])$/.exec(value);
  if (span)
    return new Date(
      now().getTime() - Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS],
    ).toISOString();
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidArgumentError(
      "expected a date-time (2026-11-25T10:00:00Z) or a span back from now (24h, 7d)",
    );
  return new Date(value).toISOString();
}
