import type { JsonValue } from "./json.js";

/**
 * One evaluated node (docs/expressions.md#preview, the trace): its JSON pointer relative to the expression's root, its
 * `op` and `fn`, the value it produced, and `error: "type_error"` when that value is null because of a
 * type error. `fn` and `error` are absent, not undefined, when they do not apply.
 */
export type TraceStep = { path: string; op: string; fn?: string; value: JsonValue; error?: "type_error" };

/** Evaluation inputs besides the scope; `now` fixes "today" for `years_since` (default: the clock). */
export type EvaluateOptions = { now?: Date };
