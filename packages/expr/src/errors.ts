import type { ExpressionProblem } from "./validate.js";

/**
 * Thrown by the compilers when a tree (or a scorecard) is malformed. `path` and `reason` are the first
 * problem, which the API answers as 422 `expression_invalid` (`context.path`, `context.reason`);
 * `problems` holds all of them, for `bundle_invalid` (`context.errors`).
 */
export class ExpressionInvalidError extends Error {
  override readonly name = "ExpressionInvalidError";
  readonly path: string;
  readonly reason: string;
  readonly problems: readonly ExpressionProblem[];

  constructor(problems: readonly ExpressionProblem[]) {
    const first = problems[0] ?? { path: "", reason: "expression is invalid" };
    super(`${first.reason} (at ${first.path === "" ? "the root" : first.path})`);
    this.path = first.path;
    this.reason = first.reason;
    this.problems = problems;
  }
}
