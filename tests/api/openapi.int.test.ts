import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { useStack } from "./support/stack.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const METHODS = ["get", "put", "post", "patch", "delete"] as const;

type Operation = {
  operationId?: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
};
type Document = {
  info: { version: string };
  tags: Array<{ name: string }>;
  paths: Record<string, Partial<Record<(typeof METHODS)[number], Operation>>>;
  components: { schemas: Record<string, unknown> };
};

const context = useStack();
let document: Document;
let operations: Array<{ path: string; method: string; operation: Operation }>;

beforeAll(async () => {
  const response = await context.api.get("/openapi.json");
  expect(response.status).toBe(200);
  document = response.body;
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [{ path, method, operation: item[method] }] : [])),
  );
});

describe("the served API document, as a client generator reads it", () => {
  it("names the release it describes: the gateway package's version (docs/versioning.md)", () => {
    const gateway = JSON.parse(readFileSync(join(ROOT, "services/gateway/package.json"), "utf8"));
    expect(document.info.version).toBe(gateway.version);
    expect(document.info.version).not.toBe("1.0.0");
  });

  it("passes Redocly (recommended) and Spectral (spectral:oas) with no error and no warning", () => {
    const file = join(mkdtempSync(join(tmpdir(), "evalp-openapi-")), "openapi.json");
    writeFileSync(file, JSON.stringify(document));
    const lint = spawnSync(process.execPath, [join(ROOT, "scripts", "lint-openapi.mjs"), file], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(`${lint.stdout}${lint.stderr}`).toContain("no errors, no warnings");
    expect(lint.status).toBe(0);
  });

  it("names every operation once, describes it, and tags it with a declared tag", () => {
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const declared = new Set(document.tags.map((tag) => tag.name));
    for (const { path, method, operation } of operations) {
      expect(operation.description?.length, `${method} ${path}`).toBeGreaterThan(20);
      expect(
        operation.tags?.every((tag) => declared.has(tag)),
        `${method} ${path}`,
      ).toBe(true);
    }
  });

  it("marks the public routes as needing no credential, and every other one as needing one", () => {
    const publicOperations = new Set([
      "post /auth/signup",
      "post /auth/login",
      "post /auth/password-reset/request",
      "post /auth/password-reset/confirm",
      "post /v1/invitations/accept",
      "get /docs/guides/{page}",
    ]);
    for (const { path, method, operation } of operations) {
      const key = `${method} ${path}`;
      if (publicOperations.has(key)) expect(operation.security, key).toEqual([]);
      else expect(operation.security?.length, key).toBeGreaterThan(0);
    }
  });

  it("documents the headers of every response, and Retry-After where a client must wait", () => {
    for (const { path, method, operation } of operations) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.headers, `${method} ${path} ${status}`).toHaveProperty("X-Request-Id");
        if (status === "429" || status === "503") expect(response.headers).toHaveProperty("Retry-After");
      }
    }
  });

  it("documents 409 (a request with the same Idempotency-Key still being answered) wherever a key is honoured", () => {
    for (const { path, method, operation } of operations) {
      const honoured = Object.values(operation.responses).some((response) =>
        Object.hasOwn(response.headers ?? {}, "Idempotent-Replayed"),
      );
      if (honoured) expect(Object.keys(operation.responses), `${method} ${path}`).toContain("409");
    }
  });

  it("keeps resources as named components, the error body among them", () => {
    const names = Object.keys(document.components.schemas);
    expect(names).toEqual(
      expect.arrayContaining([
        "ApplicationError",
        "ValidationError",
        "App",
        "Environment",
        "ApiKey",
        "ApiKeyCreated",
      ]),
    );
    expect(names.filter((name) => /^def-\d+$/.test(name))).toEqual([]);
  });
});
