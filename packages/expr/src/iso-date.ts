/**
 * Calendar dates for `years_since`. Pure integer arithmetic on the proleptic Gregorian calendar, so
 * there is no `Date` parsing leniency (`Date.parse("2021-02-30")` is March 2nd) and no local time zone.
 */

/** A day of the proleptic Gregorian calendar, in UTC. */
export type CivilDate = { year: number; month: number; day: number };

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2})))?$/;

/** The longest string `years_since` reads as a date. */
export const MAX_ISO_DATE_LENGTH = 64;

/**
 * Parses `YYYY-MM-DD` or an RFC 3339 date-time (`2020-05-17T23:30:00+02:00`) into the UTC calendar
 * day it falls on; null for anything else and for impossible dates or times (`2021-02-30`, hour 24).
 * A leap second (`:60`) is accepted and counts in its day.
 */
export function parseIsoDate(text: string): CivilDate | null {
  // No date is this long (fractional seconds aside): a longer string is not read at all, so that
  // a huge string read by many nodes costs nothing per node (docs/expressions.md#limits).
  if (text.length > MAX_ISO_DATE_LENGTH) return null;
  const m = ISO_DATE_TIME.exec(text);
  if (m === null) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (m[4] === undefined) return { year, month, day };
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offsetMinutes = 0;
  if (m[7] === undefined) {
    const offsetHour = Number(m[9]);
    const offsetMinute = Number(m[10]);
    if (offsetHour > 23 || offsetMinute > 59) return null;
    offsetMinutes = (m[8] === "-" ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  const minutes = daysFromCivil(year, month, day) * 1440 + hour * 60 + minute - offsetMinutes;
  return civilFromDays(Math.floor(minutes / 1440));
}

/** The UTC calendar day of an instant, or null for an invalid `Date`. */
export function civilDateOf(instant: Date): CivilDate | null {
  const ms = instant.getTime();
  if (Number.isNaN(ms)) return null;
  return civilFromDays(Math.floor(ms / 86_400_000));
}

/**
 * Whole years from `from` to `to`: the birthday rule (a year is complete on the same month and day;
 * someone born on February 29th completes it on March 1st in common years). Symmetric: when `from` is
 * after `to` the result is minus the whole years from `to` to `from`, i.e. truncated toward zero.
 */
export function wholeYearsBetween(from: CivilDate, to: CivilDate): number {
  // 0 - x rather than -x: the same count of years but never -0.
  if (compareDates(from, to) > 0) return 0 - wholeYearsBetween(to, from);
  const beforeAnniversary = to.month < from.month || (to.month === from.month && to.day < from.day);
  return to.year - from.year - (beforeAnniversary ? 1 : 0);
}

function compareDates(a: CivilDate, b: CivilDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// Days since 1970-01-01 and back (H. Hinnant's algorithms), valid for every year the regex admits.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

function civilFromDays(days: number): CivilDate {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}
