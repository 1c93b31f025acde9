// Why a string fails a `format`, in the words of the parsers Pydantic uses (the Rust uuid crate,
// speedate, email-validator). Only called for values Ajv has already rejected, so every function
// returns a reason; the formats themselves stay Ajv's (hyphenated UUIDs, RFC 3339 date-times).
import { pythonRepr } from "@evalp/kit";

/**
 * The uuid crate's reason (as Pydantic shows it in `uuid_parsing`) why `value` is not a UUID. Indexes
 * are 1-based byte positions, as the crate counts them. The crate also accepts the simple (32 hex
 * digits) and braced forms, which the contract's hyphenated format does not: those get the reason a
 * hyphenated UUID would fail with.
 */
export function uuidParseError(value: string): string {
  const crateError = uuidCrateError(value);
  if (crateError !== null) return crateError;
  return value.startsWith("{")
    ? "invalid character: found `{` at 1"
    : "invalid group count: expected 5, found 1";
}

/** The crate's `InvalidUuid::into_err`, or null where the crate would parse the value. */
function uuidCrateError(value: string): string | null {
  const braced = value.length >= 2 && value.startsWith("{") && value.endsWith("}");
  const prefix = braced ? 1 : value.startsWith("urn:uuid:") ? "urn:uuid:".length : 0;
  const uuid = value.slice(prefix, braced ? -1 : undefined);
  const hyphenAt: number[] = [];
  let index = 0;
  for (const character of uuid) {
    if (character === "-") hyphenAt.push(index);
    else if (!/^[0-9a-fA-F]$/.test(character)) {
      return `invalid character: found \`${character}\` at ${index + prefix + 1}`;
    }
    index += Buffer.byteLength(character);
  }
  // Only ASCII is left, so lengths in characters are lengths in bytes.
  if (hyphenAt.length === 0 && prefix === 0) {
    return uuid.length === 32
      ? null
      : `invalid length: expected length 32 for simple format, found ${uuid.length}`;
  }
  if (hyphenAt.length !== 4) return `invalid group count: expected 5, found ${hyphenAt.length + 1}`;
  let start = 0;
  for (const [group, expected] of [8, 4, 4, 4].entries()) {
    const end = hyphenAt[group] ?? 0;
    if (end !== start + expected) {
      return `invalid group length in group ${group}: expected ${expected}, found ${end - start}`;
    }
    start = end + 1;
  }
  if (uuid.length - start === 12) return null;
  // The crate measures the last group against the whole input, prefix and braces included.
  return `invalid group length in group 4: expected 12, found ${value.length - start}`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/**
 * speedate's reason why `value` is not a `YYYY-MM-DD` date, or null when it is one. In lax mode
 * Pydantic answers a bad datetime with this date error (`datetime_from_date_parsing`), so a value
 * with a valid date followed by anything is "unexpected extra characters".
 */
export function dateParseError(value: string): string | null {
  const bytes = Buffer.from(value, "utf8");
  if (bytes.length < 10) return "input is too short";
  const digit = (i: number) => {
    const byte = bytes[i] ?? 0;
    return byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : undefined;
  };
  const number = (from: number, count: number) => {
    let total = 0;
    for (let i = from; i < from + count; i++) {
      const d = digit(i);
      if (d === undefined) return undefined;
      total = total * 10 + d;
    }
    return total;
  };
  const year = number(0, 4);
  if (year === undefined) return "invalid character in year";
  if (bytes[4] !== 0x2d) return "invalid date separator, expected `-`";
  const month = number(5, 2);
  if (month === undefined) return "invalid character in month";
  if (bytes[7] !== 0x2d) return "invalid date separator, expected `-`";
  const day = number(8, 2);
  if (day === undefined) return "invalid character in day";
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const maxDay = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  if (maxDay === undefined) return "month value is outside expected range of 1-12";
  if (day < 1 || day > maxDay) return "day value is outside expected range";
  return bytes.length > 10 ? "unexpected extra characters at the end of the input" : null;
}

const NAIVE_DATETIME = /^\d{4}-\d\d-\d\d(?:[Tt_ ]([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?)?$/;

/**
 * True when `value` is a date or a date-time without an offset that Pydantic would accept as a naive
 * datetime: an RFC 3339 `date-time` that fails only for its missing offset is `timezone_aware`.
 */
export function isNaiveDateTime(value: string): boolean {
  return NAIVE_DATETIME.test(value) && dateParseError(value.slice(0, 10)) === null;
}

const LOCAL_PART_CHARACTER = /^[a-zA-Z0-9_!#$%&'*+\-/=?^`{|}~.]$/;
const DOMAIN_CHARACTER = /^[a-zA-Z0-9.-]$/;

/**
 * email-validator's reason why `value` is not an address, for Pydantic's `value is not a valid email
 * address: {reason}`. Checks run in email-validator's order; only ASCII addresses are accepted.
 */
export function emailSyntaxError(value: string): string {
  const at = value.indexOf("@");
  if (at < 0) return "An email address must have an @-sign.";
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local === "") return "There must be something before the @-sign.";
  const badLocal = invalidCharacters(local, LOCAL_PART_CHARACTER);
  if (badLocal) return `The email address contains invalid characters before the @-sign: ${badLocal}.`;
  const localDots = dotAtomProblem(
    local,
    "An email address cannot start with a {}.",
    "An email address cannot have a {} immediately before the @-sign.",
    false,
  );
  if (localDots) return localDots;
  if (domain === "") return "There must be something after the @-sign.";
  const badDomain = invalidCharacters(domain, DOMAIN_CHARACTER);
  if (badDomain) return `The part after the @-sign contains invalid characters: ${badDomain}.`;
  const domainDots = dotAtomProblem(
    domain,
    "An email address cannot have a {} immediately after the @-sign.",
    "An email address cannot end with a {}.",
    true,
  );
  if (domainDots) return domainDots;
  if (!domain.includes(".")) return "The part after the @-sign is not valid. It should have a period.";
  return "The part after the @-sign is not valid. It is not within a valid top-level domain.";
}

function dotAtomProblem(label: string, start: string, end: string, hostname: boolean): string | undefined {
  if (label.endsWith(".")) return end.replace("{}", "period");
  if (label.startsWith(".")) return start.replace("{}", "period");
  if (label.includes("..")) return "An email address cannot have two periods in a row.";
  if (!hostname) return undefined;
  if (label.endsWith("-")) return end.replace("{}", "hyphen");
  if (label.startsWith("-")) return start.replace("{}", "hyphen");
  if (label.includes(".-") || label.includes("-.")) {
    return "An email address cannot have a period and a hyphen next to each other.";
  }
  return undefined;
}

/** The offending characters as email-validator lists them: displayed, de-duplicated, sorted. */
function invalidCharacters(text: string, allowed: RegExp): string {
  const shown = new Set<string>();
  for (const character of text) if (!allowed.test(character)) shown.add(displayCharacter(character));
  return [...shown].sort().join(", ");
}

function displayCharacter(character: string): string {
  if (character === "\\") return '"\\"';
  if (/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(character)) return pythonRepr(character);
  if (character === " ") return "SPACE";
  const code = character.codePointAt(0) ?? 0;
  return `U+${code
    .toString(16)
    .toUpperCase()
    .padStart(code < 0xffff ? 4 : 8, "0")}`;
}
