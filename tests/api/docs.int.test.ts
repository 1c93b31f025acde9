import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { useStack } from "./support/stack.js";

const DOCS = fileURLToPath(new URL("../../docs/", import.meta.url));

/** The pages the guides' index links to (`[title](page.md)`), and the index itself. */
function indexedPages(): string[] {
  const index = readFileSync(`${DOCS}README.md`, "utf8");
  const linked = [...index.matchAll(/\]\(([a-z0-9-]+\.md)(?:#[^)]*)?\)/g)].map((match) => match[1] as string);
  return ["README.md", ...new Set(linked)];
}

const context = useStack();
let description: string;

beforeAll(async () => {
  const response = await context.api.get("/openapi.json");
  expect(response.status).toBe(200);
  description = response.body.info.description;
});

describe("the guides, served beside the API document", () => {
  it("the index links to the guides", () => {
    expect(indexedPages().length).toBeGreaterThan(10);
  });

  it("serves every page of the index as markdown, as it is in docs/", async () => {
    for (const page of indexedPages()) {
      const response = await context.api.get(`/docs/guides/${page}`);
      expect(response.status, page).toBe(200);
      expect(response.headers.get("content-type"), page).toBe("text/markdown; charset=utf-8");
      expect(response.text, page).toBe(readFileSync(`${DOCS}${page}`, "utf8"));
    }
  });

  it("links every page from the document's description, which /docs renders", async () => {
    for (const page of indexedPages()) {
      // The document's links are absolute, under PUBLIC_URL (what a reader of /docs can reach).
      expect(description, page).toMatch(
        new RegExp(`\\]\\(https?://[^)\\s]+/docs/guides/${page.replace(".", "\\.")}\\)`),
      );
    }
    const ui = await context.api.get("/docs/");
    expect(ui.status).toBe(200);
  });

  it("answers 404 in the error shape for any other name, a path included", async () => {
    for (const name of ["unknown.md", "http", "..%2Fpackage.json", "..%2F..%2FREADME.md", "README.md%00"]) {
      const response = await context.api.get(`/docs/guides/${name}`);
      expect(response.status, name).toBe(404);
      expect(response.body.detail.code, name).toBe("not_found");
      expect(response.body.detail.request_id, name).toBe(response.headers.get("x-request-id"));
    }
    // A client that resolves `..` itself asks for a path outside the guides: still a 404.
    const resolved = await context.api.get("/docs/guides/../x");
    expect(resolved.status).toBe(404);
    expect(resolved.body.detail.code).toBe("not_found");
  });

  it("needs no credential and honours none", async () => {
    const response = await context.api.get("/docs/guides/errors.md", { apiKey: "evk_unknown0_0" });
    expect(response.status).toBe(200);
  });
});
