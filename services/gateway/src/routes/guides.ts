import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { notFound } from "@evalp/kit";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import guides from "./guides.json" with { type: "json" };
import { errorResponses, textResponse } from "./wire.js";

/**
 * The guides of `docs/` the gateway serves, by file name, with what each is about (guides.json,
 * data beside this file). A fixed list: a page is served only when its name is here, so no
 * request can name another file.
 */
export const GUIDES: ReadonlyArray<{ page: string; title: string }> = guides;

/** Where the guides are served; a page's address is this plus its name. */
export const GUIDES_PATH = "/docs/guides";

/**
 * The repository's (or the image's) `docs/`: two levels above the gateway's package, found by
 * its package.json whether the code runs from `src/` (tests) or `dist/` (a build, the image).
 */
export function guidesDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("the gateway's package.json was not found above its code");
    dir = parent;
  }
  return join(dir, "..", "..", "docs");
}

/**
 * `GET /docs/guides/<page>`: the guides, read-only, as markdown; the API document's description
 * (rendered on `/docs`) links to them. Read once at start: a gateway built without its guides
 * fails then rather than answering 404 for every page.
 */
export function registerGuideRoutes(app: FastifyInstance, directory = guidesDirectory()): void {
  const pages = new Map<string, string>(
    GUIDES.map(({ page }) => [page, readFileSync(join(directory, page), "utf8")]),
  );
  app.withTypeProvider<TypeBoxTypeProvider>().route({
    method: "GET",
    url: `${GUIDES_PATH}/:page`,
    config: { access: { auth: "none" } },
    schema: {
      tags: ["guides"],
      operationId: "getGuide",
      summary: "Read a guide",
      description:
        "One page of the guides to the API (how it behaves, beyond the fields this document " +
        `lists), as markdown: ${GUIDES.map(({ page }) => `\`${page}\``).join(", ")}. Any other ` +
        "name, a path included, is 404 `not_found`. Needs no credential.",
      security: [],
      params: Type.Object({ page: Type.String({ description: "The page's file name, e.g. `errors.md`." }) }),
      response: {
        200: textResponse("The page, as markdown.", "text/markdown"),
        ...errorResponses({ auth: "none" }, false, [], false),
      },
    },
    handler: async (request, reply) => {
      const { page } = request.params;
      const text = pages.get(page);
      if (text === undefined) throw notFound("guide", { page });
      return reply.type("text/markdown; charset=utf-8").send(text);
    },
  });
}
