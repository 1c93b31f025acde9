import type { ErrorObject } from "ajv";

/**
 * Ajv reports a failed `anyOf`/`oneOf` as the errors of every branch plus one for the union; Pydantic
 * reports a field once. This replaces each failed union (innermost first) by the errors of one branch:
 * a `null` branch only makes the field nullable and says nothing; branches that are all literals become
 * one `const` error whose `params.allowedValues` lists every value; otherwise the branch the value came
 * closest to speaks. A union that failed without branch errors (`oneOf` matching twice) stays as it is.
 */
export function collapseUnions(errors: ErrorObject[]): ErrorObject[] {
  let list = errors;
  const unions = list
    .filter((error) => error.keyword === "anyOf" || error.keyword === "oneOf")
    .sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  for (const union of unions) {
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const error of list) {
      if (!error.schemaPath.startsWith(prefix)) continue;
      const branch = error.schemaPath.slice(prefix.length).split("/")[0] ?? "";
      branches.set(branch, [...(branches.get(branch) ?? []), error]);
    }
    const replaced = new Set([...branches.values()].flat());
    const kept = chooseBranch(union, [...branches.values()]);
    list = list.flatMap((error) => (error === union ? kept : replaced.has(error) ? [] : [error]));
  }
  return list;
}

function chooseBranch(union: ErrorObject, branches: ErrorObject[][]): ErrorObject[] {
  const atUnion = (error: ErrorObject) => error.instancePath === union.instancePath;
  const isType = (error: ErrorObject, type?: string) =>
    atUnion(error) && error.keyword === "type" && (type === undefined || error.params.type === type);
  const isLiteral = (error: ErrorObject) =>
    atUnion(error) && (error.keyword === "const" || error.keyword === "enum");
  const candidates = branches.filter((branch) => !branch.every((error) => isType(error, "null")));
  const [first] = candidates;
  if (!first) return [union];
  if (
    candidates.every((branch) => branch.some(isLiteral) && branch.every((e) => isLiteral(e) || isType(e)))
  ) {
    const allowedValues = candidates
      .flat()
      .filter(isLiteral)
      .flatMap((error) =>
        error.keyword === "const" ? [error.params.allowedValue] : error.params.allowedValues,
      );
    return [{ ...union, keyword: "const", params: { allowedValues } }];
  }
  // The branch the value came closest to: its type matched, then the fewest complaints, then the first.
  const distance = (branch: ErrorObject[]) =>
    (branch.some((error) => isType(error)) ? 1e6 : 0) + branch.length;
  return candidates.reduce((best, branch) => (distance(branch) < distance(best) ? branch : best), first);
}
