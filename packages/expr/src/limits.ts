/**
 * What one evaluation may cost (docs/expressions.md#limits). The tree limits (`MAX_DEPTH`, `MAX_NODES`
 * in nodes.ts) bound one expression; these bound a scorecard as a whole, its trace and the work its
 * comparisons do, whatever the size of the answers it is evaluated against. They are checked when a
 * scorecard is validated and again when one is evaluated, since a stored bundle may predate them.
 */

/** At most this many axes in one scorecard. */
export const MAX_AXES = 100;

/** At most this many nodes across all the axes' expressions of one scorecard. */
export const MAX_SCORECARD_NODES = 20_000;

/**
 * The serialized size (bytes of UTF-8 JSON) one trace may reach, all axes of a scorecard together.
 * Past it, further steps are left out and counted (`truncated`, `omitted_steps`); the values and
 * scores are still computed in full.
 */
export const TRACE_BUDGET_BYTES = 1024 * 1024;

/**
 * A step's value larger than this (bytes of UTF-8 JSON) is not copied into the trace: the step says
 * `value: null` and `value_omitted: {type, size}` instead.
 */
export const TRACE_VALUE_MAX_BYTES = 1024;

/**
 * The comparison work one evaluation may do (a scorecard's axes together): `eq`, `ne`, `in` and the
 * ordering of strings step through their values, one unit per array item or character compared,
 * three per object property (a string compared whole counts one unit per 64 characters). A comparison that
 * would go past it makes its node null with `"error": "limit_exceeded"` rather than running on.
 */
export const MAX_COMPARISON_WORK = 1_000_000;
