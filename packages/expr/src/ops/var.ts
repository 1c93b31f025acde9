import type { JsonValue } from "../json.js";
import { isPlainObject } from "../json.js";

/** What `var` reads from: the three parts of an evaluation's input. Missing parts read as absent. */
export type Scope = { answers?: unknown; context?: unknown; signals?: unknown };

/**
 * The value at a dotted path (already split, first segment one of the scope's parts), or null when
 * anything along it is absent. Only own properties are followed (`answers.q.constructor` is absent,
 * never a function), and a segment that is a canonical array index (`0`, `12`) reads into an array.
 */
export function readPath(scope: Scope, segments: readonly string[]): JsonValue {
  const [root, ...rest] = segments;
  let current: unknown =
    root === "answers" ? scope.answers : root === "context" ? scope.context : scope.signals;
  for (const segment of rest) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment)) return null;
      current = current[Number(segment)];
    } else if (isPlainObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return null;
    }
  }
  return current === undefined ? null : (current as JsonValue);
}
