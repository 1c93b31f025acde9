import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { type Operation, resourceOf } from "./fuzz-openapi.js";
import { encodeAny, garbageCredential, headerText, nastyString, wellFormed } from "./fuzz-values.js";

type Body = { kind: "json"; value: unknown } | { kind: "raw"; text: string } | { kind: "none" };

/** A request being built: every part valid until a mutation spoils it. */
export type Draft = {
  method: string;
  params: Record<string, string>;
  query: string[];
  headers: Record<string, string>;
  body: Body;
};

/**
 * What the contract answers a request whose only defect is this one, on any route: its status,
 * and its application `code` or the `type` and `loc` of a validation problem it lists.
 */
export type Expected = { status: number; code?: string; type?: string; loc?: string[] };

export type Mutation = { note: string; apply: (draft: Draft) => void; expected?: Expected };

const unauthenticated: Expected = { status: 401, code: "unauthenticated" };

/** No credential, garbage, or the credential of another door (participant, agent, operator). */
export function credentialMutations(
  operation: Operation,
  wrongDoors: Record<string, string>[],
): fc.Arbitrary<Mutation> {
  const closed = operation.door !== "public";
  const replace = (headers: Record<string, string>, note: string): Mutation => ({
    note,
    apply: (draft) => {
      for (const name of ["authorization", "x-api-key", "cookie"]) delete draft.headers[name];
      Object.assign(draft.headers, headers);
    },
    ...(closed && { expected: unauthenticated }),
  });
  const mutations = [
    fc.constant(replace({}, "no credential")),
    garbageCredential.map((headers) => replace(headers, `garbage credential ${Object.keys(headers)}`)),
  ];
  if (wrongDoors.length > 0) {
    mutations.push(
      fc.constantFrom(...wrongDoors).map((headers) => replace(headers, "another door's credential")),
    );
  }
  return fc.oneof(...mutations);
}

/** Path parameters: a malformed id, a random id, and an id of the same kind in another tenant. */
export function pathMutations(
  operation: Operation,
  foreign: Record<string, string>,
): fc.Arbitrary<Mutation> | null {
  if (operation.pathParams.length === 0) return null;
  // A path id that names nothing this principal may see is 404 (docs/errors.md), whatever is wrong with it.
  const expected = operation.door === "operator" ? { expected: { status: 404, code: "not_found" } } : {};
  const value = fc.oneof(
    fc.constantFrom(
      "not-a-uuid",
      "0",
      "00000000-0000-0000-0000-00000000000g",
      "00000000-0000-0000-0000-000000000000",
      "%2F",
      "%20",
      "%00",
      "%E2%80%AE",
      "x".repeat(100),
    ),
    fc.uuid(),
    nastyString.map((s) => encodeURIComponent(wellFormed(s)) || "%20").filter((s) => s.length <= 100),
  );
  return fc.oneof(
    fc.tuple(fc.constantFrom(...operation.pathParams), value).map(([name, raw]) => ({
      note: `path ${name}=${raw.slice(0, 40)}`,
      apply: (draft: Draft) => {
        draft.params[name] = raw;
      },
      ...expected,
    })),
    fc.constantFrom(...operation.pathParams).map((name) => ({
      note: `path ${name} of another tenant`,
      apply: (draft: Draft) => {
        const resource = resourceOf(name, operation.path);
        draft.params[name] = (resource && foreign[resource]) ?? randomUUID();
      },
      ...expected,
    })),
  );
}

/** Query strings: bad limits, cursors, dates and enums, repeated, unknown and undecodable parameters. */
export function queryMutations(operation: Operation): fc.Arbitrary<Mutation> {
  const names = operation.query.map((p) => p.name);
  const badValue = fc.oneof(
    fc.constantFrom("0", "-1", "101", "501", "abc", "1.5", "1e2", "", " ", "0x10", "99999999999999999999"),
    fc.constantFrom("NaN", "x".repeat(513), "a.b.c", "2026-13-01T00:00:00Z", "2026-01-01", "unknown-status"),
    nastyString.filter((s) => s.length < 600),
  );
  const mutations: fc.Arbitrary<Mutation>[] = [
    fc
      .constantFrom("%zz=1", "limit=%ED%A0%80", "cursor=%00", "a[b][c]=1", "__proto__[x]=1", "&&&=")
      .map((raw) => ({
        note: `query ${raw}`,
        apply: (draft: Draft) => {
          draft.query.push(raw);
        },
      })),
  ];
  if (names.length > 0) {
    mutations.push(
      fc.tuple(fc.constantFrom(...names), badValue).map(([name, value]) => ({
        note: `query ${name}=${value.slice(0, 40)}`,
        apply: (draft: Draft) => {
          draft.query = draft.query.filter((pair) => !pair.startsWith(`${name}=`));
          draft.query.push(`${name}=${encodeAny(value)}`);
        },
      })),
      fc.constantFrom(...names).map((name) => ({
        note: `query ${name} twice`,
        apply: (draft: Draft) => {
          draft.query.push(`${name}=1`, `${name}=2`);
        },
      })),
    );
  }
  return fc.oneof(...mutations);
}

/** Idempotency-Key, X-Request-Id and Accept out of shape. */
export function headerMutations(operation: Operation): fc.Arbitrary<Mutation> {
  const key = operation.headers.find((header) => header.name === "idempotency-key");
  const keyProblem = key ? { status: 422, loc: ["header", "Idempotency-Key"] } : undefined;
  const setKey = (value: string, expected?: Expected): Mutation => ({
    note: `Idempotency-Key ${JSON.stringify(value.slice(0, 40))} (${value.length})`,
    apply: (draft) => {
      draft.headers["idempotency-key"] = value;
    },
    ...(expected && { expected }),
  });
  return fc.oneof(
    fc.integer({ min: 256, max: 2000 }).map((n) => setKey("k".repeat(n), keyProblem)),
    fc
      .oneof(fc.constantFrom(" ", "\t", "\u00ff\u00fe", '"quoted"', "a,b"), headerText(255))
      .map((v) => setKey(v)),
    fc.constant<Mutation>({
      note: "no Idempotency-Key",
      apply: (draft) => {
        delete draft.headers["idempotency-key"];
      },
      ...(key?.required && keyProblem && { expected: { ...keyProblem, type: "missing" } }),
    }),
    fc.oneof(fc.constant("r".repeat(129)), headerText(200)).map((value) => ({
      note: `X-Request-Id ${JSON.stringify(value.slice(0, 40))}`,
      apply: (draft: Draft) => {
        draft.headers["x-request-id"] = value;
      },
    })),
    fc.constantFrom("text/html", "application/xml", "*/*;q=0", "\u00e9").map((value) => ({
      note: `Accept ${value}`,
      apply: (draft: Draft) => {
        draft.headers.accept = value;
      },
    })),
  );
}

/** A method the path does not declare: no such route. */
export function methodMutations(declared: string[]): fc.Arbitrary<Mutation> | null {
  const others = ["GET", "POST", "PUT", "PATCH", "DELETE"].filter((method) => !declared.includes(method));
  if (others.length === 0) return null;
  return fc.constantFrom(...others).map((method) => ({
    note: `method ${method}`,
    apply: (draft: Draft) => {
      draft.method = method;
    },
    expected: { status: 404, code: "not_found" },
  }));
}
