import type { SyntaxNode } from "@lezer/common";
import { parser } from "@prometheus-io/lezer-promql";

/** What an expression names: its metrics, the labels its selectors match on, the labels it groups by. */
export type PromqlNames = { metrics: string[]; matchedLabels: string[]; groupingLabels: string[] };

/**
 * Parses a PromQL expression with Prometheus' own grammar (the Lezer parser its web UI uses) and
 * returns the syntax errors (empty when it parses) and what it names. An unknown function, a
 * missing bracket or a malformed matcher is an error.
 */
export function parsePromql(expr: string): { errors: string[]; names: PromqlNames } {
  const tree = parser.parse(expr);
  const errors: string[] = [];
  const names: PromqlNames = { metrics: [], matchedLabels: [], groupingLabels: [] };
  const text = (node: SyntaxNode) => expr.slice(node.from, node.to);
  tree.iterate({
    enter(ref) {
      const node = ref.node;
      if (ref.type.isError) {
        errors.push(
          `syntax error at ${ref.from}: …${expr.slice(Math.max(0, ref.from - 20), ref.from + 20)}…`,
        );
        return;
      }
      if (ref.name === "VectorSelector") {
        const identifier = node.getChild("Identifier");
        if (identifier) names.metrics.push(text(identifier));
      }
      if (ref.name === "UnquotedLabelMatcher" || ref.name === "QuotedLabelMatcher") {
        const label = node.getChild("LabelName");
        const value = node.getChild("StringLiteral");
        if (label && text(label) === "__name__" && value) names.metrics.push(JSON.parse(text(value)));
        else if (label) names.matchedLabels.push(text(label));
      }
      if (ref.name === "GroupingLabels") {
        for (const label of node.getChildren("LabelName")) names.groupingLabels.push(text(label));
      }
    },
  });
  if (expr.trim() === "") errors.push("empty expression");
  return { errors, names };
}
