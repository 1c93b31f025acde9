import { type ExpressionNode, expr } from "@evalp/expr";

/** Generated expression trees for the benchmarks: deterministic, shaped like real scorecards. */

/** How many questions the generated trees read (`answers.q1.value` …). */
export const QUESTIONS = 20;
/** mulberry32: a tiny deterministic PRNG, so the generated tree is the same on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A number-valued tree of exactly `size` nodes, mixing the ops a real scorecard uses. */
export function numericTree(size: number, random: () => number, depth = 1): ExpressionNode {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const question = () => expr.var(`answers.q${1 + Math.floor(random() * QUESTIONS)}.value`);
  if (size === 1) return random() < 0.7 ? question() : expr.lit(Math.round(random() * 100) / 10);
  if (size === 2) return expr.calc(pick(["neg", "abs", "floor", "round"] as const), numericTree(1, random));
  // Deep down, stay flat so the tree keeps well within the depth limit of 64.
  if (depth > 12)
    return expr.agg(pick(["sum", "max"] as const), ...Array.from({ length: size - 1 }, question));
  const rest = size - 1;
  const kind = random();
  if (kind < 0.35 || rest < 5) {
    const left = 1 + Math.floor(random() * (rest - 1));
    return expr.calc(
      pick(["add", "sub", "mul", "div", "mod"] as const),
      numericTree(left, random, depth + 1),
      numericTree(rest - left, random, depth + 1),
    );
  }
  if (kind < 0.7) {
    // if (qN.value >= k) then … else …: 1 + cmp(3) + two numeric branches.
    const cond = expr.cmp(
      pick(["gte", "lt", "eq"] as const),
      question(),
      expr.lit(Math.floor(random() * 10)),
    );
    const thenSize = 1 + Math.floor(random() * (rest - 4));
    return expr.if(
      cond,
      numericTree(thenSize, random, depth + 1),
      numericTree(rest - 3 - thenSize, random, depth + 1),
    );
  }
  const parts = Math.min(rest, 2 + Math.floor(random() * 4));
  const sizes = Array.from({ length: parts }, () => 1);
  for (let left = rest - parts; left > 0; left--) {
    const at = Math.floor(random() * parts);
    sizes[at] = (sizes[at] as number) + 1;
  }
  return expr.agg(
    pick(["sum", "min", "max", "median"] as const),
    ...sizes.map((s) => numericTree(s, random, depth + 1)),
  );
}
