import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyError, FastifyInstance } from "fastify";

/** The paths that answer the web app's index.html (docs/pages.md); the app shows the page a path names. */
export const PAGE_PATHS = ["/accept-invitation", "/reset-password", "/interview", "/console"] as const;

/**
 * What a page may load: its own scripts, styles and API only (no inline script, no framing). The
 * tokens pages carry in their addresses are why no referrer leaves them.
 */
export const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
} as const;

/** Hashed file names change with their content: a year, never revalidated. */
const ASSET_CACHE = "public, max-age=31536000, immutable";

/**
 * The repository's (or the image's) `web/dist`: two levels above the gateway's package, found by
 * its package.json whether the code runs from `src/` (tests) or `dist/` (a build, the image).
 */
export function webDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("the gateway's package.json was not found above its code");
    dir = parent;
  }
  return join(dir, "..", "..", "web", "dist");
}

/**
 * The pages (`web/`): `PAGE_PATHS` answer index.html (`no-cache`: a new release is picked up at
 * once), `/assets/*` the hashed files it loads. Neither is in the API document. A checkout whose
 * web app was not built serves no page: those paths answer the API's 404.
 */
export async function registerPages(app: FastifyInstance, directory = webDirectory()): Promise<boolean> {
  const indexFile = join(directory, "index.html");
  if (!existsSync(indexFile)) {
    app.log.warn({ directory }, "web app not built: its pages answer 404");
    return false;
  }
  const index = readFileSync(indexFile);
  await app.register(async (pages) => {
    pages.addHook("onSend", async (_request, reply, payload) => {
      reply.headers(PAGE_HEADERS);
      return payload;
    });
    // A file path refused by the static server (a dot file, a path outside assets/): no such file.
    pages.setErrorHandler((error: FastifyError, _request, reply) => {
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) return reply.callNotFound();
      throw error;
    });
    for (const url of PAGE_PATHS) {
      pages.get(
        url,
        { schema: { hide: true }, config: { access: { auth: "none" } } },
        async (_request, reply) =>
          reply.header("cache-control", "no-cache").type("text/html; charset=utf-8").send(index),
      );
    }
    await pages.register(fastifyStatic, {
      root: join(directory, "assets"),
      prefix: "/assets/",
      decorateReply: false,
      schemaHide: true,
      index: false,
      list: false,
      dotfiles: "deny",
      cacheControl: false,
      setHeaders: (reply) => {
        reply.header("cache-control", ASSET_CACHE);
      },
    });
  });
  return true;
}
