import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import swagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { registerErrorHandling } from "./errors.js";
import { PAGE_HEADERS, PAGE_PATHS, registerPages } from "./pages.js";

/** A built web app in a temporary folder: index.html and one hashed asset. */
function builtApp(): string {
  const dir = mkdtempSync(join(tmpdir(), "evalp-web-"));
  mkdirSync(join(dir, "assets"));
  writeFileSync(
    join(dir, "index.html"),
    '<!doctype html><script type="module" src="./assets/index-abc123.js"></script>',
  );
  writeFileSync(join(dir, "assets", "index-abc123.js"), "console.log('page')");
  return dir;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function gateway(directory: string) {
  app = Fastify();
  registerErrorHandling(app);
  await registerPages(app, directory);
  return app;
}

describe("registerPages", () => {
  it("answers index.html on every page path, not cached, with the pages' security headers", async () => {
    const server = await gateway(builtApp());
    for (const url of [...PAGE_PATHS, "/accept-invitation?token=abc"]) {
      const page = await server.inject({ url });
      expect(page.statusCode).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(page.headers["cache-control"]).toBe("no-cache");
      expect(page.body).toContain("./assets/index-abc123.js");
      expect(page.headers).toMatchObject(PAGE_HEADERS);
    }
  });

  it("serves hashed assets as immutable for a year, and an unknown one as the API's 404", async () => {
    const server = await gateway(builtApp());
    const asset = await server.inject({ url: "/assets/index-abc123.js" });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(asset.headers["content-type"]).toMatch(/javascript/);
    expect(asset.headers["x-content-type-options"]).toBe("nosniff");
    const missing = await server.inject({ url: "/assets/nothing.js" });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ detail: { code: "not_found" } });
    const outside = await server.inject({ url: "/assets/..%2findex.html" });
    expect(outside.statusCode).toBe(404);
  });

  it("keeps the pages and their files out of the API document", async () => {
    app = Fastify();
    await app.register(swagger, { openapi: { openapi: "3.1.0", info: { title: "t", version: "1" } } });
    await registerPages(app, builtApp());
    await app.ready();
    expect(app.swagger().paths ?? {}).toEqual({});
  });

  it("serves no page when the web app was not built: the page paths answer the API's 404", async () => {
    const server = await gateway(join(tmpdir(), "evalp-web-not-built"));
    const page = await server.inject({ url: "/interview" });
    expect(page.statusCode).toBe(404);
    expect(page.json()).toMatchObject({ detail: { code: "not_found" } });
  });
});
