import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PLANES } from "@evalp/kit";
import { describe, expect, it } from "vitest";

// Every plane lays out its RPCs alike (docs/architecture.md#layout-in-detail): `routes.ts` registers them,
// and the handler of RPC `fooBar` is `fooBar`, the one export of `src/rpc/foo-bar.ts`. A reader
// who knows an RPC's name opens its file in one step, whichever plane serves it.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

type Registration = { service: string; rpc: string; handler: string };

/** Each `name: handler(...)` entry of the `router.service(Service, { ... })` calls of a routes file. */
function registrations(routes: string): Registration[] {
  const found: Registration[] = [];
  for (const call of routes.matchAll(/router\.service\((\w+), \{([\s\S]*?)\}\);/g)) {
    const [, service = "", body = ""] = call;
    // Entries are split at the top level only: a handler's own arguments may hold commas.
    for (const entry of topLevelEntries(body)) {
      const match = /^(\w+): (\w+)\(/.exec(entry);
      if (!match) throw new Error(`${service}: an entry that is no \`rpc: handler(...)\`: ${entry}`);
      const [, rpc = "", handler = ""] = match;
      found.push({ service, rpc, handler });
    }
  }
  return found;
}

function topLevelEntries(body: string): string[] {
  const entries: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of body) {
    if (char === "(") depth += 1;
    if (char === ")") depth -= 1;
    if (char === "," && depth === 0) {
      entries.push(current.trim());
      current = "";
    } else current += char;
  }
  entries.push(current.trim());
  return entries.filter((entry) => entry !== "");
}

/** Where a routes file imports each name from, as written. */
function importsOf(source: string): Map<string, string> {
  const from = new Map<string, string>();
  for (const [, names = "", path = ""] of source.matchAll(/import \{([^}]*)\} from "([^"]+)";/g)) {
    for (const name of names.split(",")) {
      const local = name
        .trim()
        .replace(/^type /, "")
        .split(" as ")
        .pop()
        ?.trim();
      if (local) from.set(local, path);
    }
  }
  return from;
}

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

describe("registrations", () => {
  it("reads every entry of a registration, and refuses one it cannot read", () => {
    const routes = `router.service(A, {\n  getThing: getThing(deps, check(x, y)),\n  listThings: listThings(deps),\n});
    router.service(B, { countUsage: countUsage(deps) });`;
    expect(registrations(routes)).toEqual([
      { service: "A", rpc: "getThing", handler: "getThing" },
      { service: "A", rpc: "listThings", handler: "listThings" },
      { service: "B", rpc: "countUsage", handler: "countUsage" },
    ]);
    expect(() => registrations("router.service(A, { getThing });")).toThrow(/getThing/);
  });
});

describe.each(PLANES)("the %s plane's RPCs", (plane) => {
  const src = join(ROOT, "services", plane, "src");
  const routes = readFileSync(join(src, "routes.ts"), "utf8");
  const imports = importsOf(routes);
  const registered = registrations(routes);

  it("are registered in its routes.ts", () => {
    expect(registered.length).toBeGreaterThan(2);
  });

  it.each(registered.map((entry) => [`${entry.service}.${entry.rpc}`, entry] as const))(
    "%s is served by the handler at rpc/<its name>.ts",
    (_, { rpc, handler }) => {
      expect(handler).toBe(rpc);
      expect(imports.get(handler)).toBe(`./rpc/${kebab(rpc)}.js`);
      const file = join(src, "rpc", `${kebab(rpc)}.ts`);
      expect(existsSync(file)).toBe(true);
      expect(readFileSync(file, "utf8")).toMatch(new RegExp(`export (async )?function ${handler}\\(`));
    },
  );
});
