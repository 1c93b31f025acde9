import { readFileSync } from "node:fs";

/** What the document says of one operation: prose, kept apart from the route that declares the rest. */
export type Prose = {
  summary: string;
  description: string;
  /** What each success status means, by status. */
  responses: Partial<Record<number, string>>;
};

/**
 * A plane of the API as its routes declare it: the tag of its operations and their prose, read
 * from its `operations.md` when its first route is declared (once, at start-up).
 */
export type PlaneProse = {
  tag: string;
  /** The operation's prose; throws when the plane's file has no section for it. */
  prose: (operationId: string) => Prose;
  /** Every operationId of the plane's file, to check that each has its route. */
  operationIds: () => string[];
};

const RESPONSE = /^- (\d{3}): (.+)$/;

/**
 * Reads an `operations.md`: a `## operationId` section per operation, whose first paragraph is
 * its summary, the paragraphs after it its description (a paragraph's lines joined by spaces,
 * paragraphs by a blank line) and a last list of `- status: meaning` its success responses.
 */
export function parseOperations(markdown: string): Map<string, Prose> {
  const operations = new Map<string, Prose>();
  for (const section of markdown.split(/^## /m).slice(1)) {
    const [heading = "", ...rest] = section.split("\n");
    const id = heading.trim();
    const paragraphs = rest
      .join("\n")
      .split(/\n{2,}/)
      .map((paragraph) => paragraph.trim())
      .filter((paragraph) => paragraph !== "");
    const [summary, ...body] = paragraphs;
    const responses: Prose["responses"] = {};
    const last = body.at(-1)?.split("\n") ?? [];
    if (last.length > 0 && last.every((line) => RESPONSE.test(line))) {
      body.pop();
      for (const line of last) {
        const [, status, meaning] = RESPONSE.exec(line) ?? [];
        responses[Number(status)] = meaning ?? "";
      }
    }
    if (!summary || body.length === 0 || Object.keys(responses).length === 0)
      throw new Error(`operations: ${id} needs a summary, a description and its responses`);
    if (operations.has(id)) throw new Error(`operations: ${id} is described twice`);
    const description = body.map((paragraph) => paragraph.split("\n").join(" ")).join("\n\n");
    operations.set(id, { summary, description, responses });
  }
  return operations;
}

/** The plane tagged `tag` whose prose is the file at `file` (an `operations.md` beside its routes). */
export function plane(tag: string, file: URL): PlaneProse {
  let operations: Map<string, Prose> | undefined;
  const read = () => {
    operations ??= parseOperations(readFileSync(file, "utf8"));
    return operations;
  };
  return {
    tag,
    prose: (operationId) => {
      const prose = read().get(operationId);
      if (!prose) throw new Error(`${file.pathname} has no section for ${operationId}`);
      return prose;
    },
    operationIds: () => [...read().keys()],
  };
}
