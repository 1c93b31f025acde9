import { randomUUID } from "node:crypto";
import fc from "fast-check";
import type { ApiClient, ApiResponse } from "../../api/support/client.js";
import { bodyMutations } from "./fuzz-body.js";
import {
  credentialMutations,
  type Draft,
  type Expected,
  headerMutations,
  methodMutations,
  pathMutations,
  queryMutations,
} from "./fuzz-mutations.js";
import { exampleOf, fillPath, type Operation, resourceOf } from "./fuzz-openapi.js";
import { encodeAny, expandNested } from "./fuzz-values.js";

/** The credentials a fuzzed request may present, each valid for its own door. */
export type Credentials = {
  /** The owner's session: every operator route. */
  session: string;
  /** An API key with every scope but the agent's: operator routes of its environment. */
  apiKey: string;
  /** An `interviews:agent` key. */
  agentKey: string;
  participant: string;
  agent: string;
  /** A session of its own for `/auth/*`, whose logout must not end the others. */
  publicSession: string;
};

/** Where fuzzed requests go and what they present: resource ids of their own tenant and another's. */
export type FuzzTarget = {
  own: Record<string, string>;
  foreign: Record<string, string>;
  credentials: Credentials;
};

/** A request as it goes on the wire, with what was done to it and what it must get, if known. */
export type FuzzRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  notes: string[];
  expected: Expected | undefined;
};

type Presented = { headers: Record<string, string>; full: boolean };

/**
 * The credentials that open `operation`'s door (`full` when that one passes every check of the
 * route: the owner's session, the participant's and the agent's tokens), and those of the other
 * doors. Credentials are named (`@@session@@`) and filled in as a request is sent, so that a
 * replaced credential is the one sent, and no report prints one.
 */
function doors(operation: Operation) {
  const bearer = (name: keyof Credentials) => ({ authorization: `Bearer @@${name}@@` });
  const byDoor: Record<Operation["door"], Presented[]> = {
    operator: [
      { headers: bearer("session"), full: true },
      { headers: { cookie: "evp_session=@@session@@" }, full: true },
      { headers: { "x-api-key": "@@apiKey@@" }, full: false },
      { headers: bearer("apiKey"), full: false },
    ],
    participant: [{ headers: bearer("participant"), full: true }],
    agent: [{ headers: bearer("agent"), full: true }],
    public: [
      { headers: {}, full: false },
      { headers: bearer("publicSession"), full: true },
    ],
  };
  // `/auth/logout` takes any session: the operator's is never offered there, or a logout ends it.
  const others = (["operator", "participant", "agent"] as const).filter(
    (door) => door !== operation.door && !(operation.door === "public" && door === "operator"),
  );
  const wrong = others.flatMap((door) => byDoor[door].map((presented) => presented.headers));
  // An agent key is refused by the participant and agent doors; the operator door checks its scope.
  if (operation.door === "participant" || operation.door === "agent") wrong.push(bearer("agentKey"));
  return { right: byDoor[operation.door], wrong };
}

/**
 * Requests to `operation` that each carry one to three defects, on top of a request that would
 * otherwise be valid: a credential of the operation's door, its tenant's ids, a minimal valid
 * body. A request with one defect and a credential that passes every check carries what the
 * contract answers that defect.
 */
export function badRequests(
  operation: Operation,
  target: FuzzTarget,
  declaredMethods: string[],
): fc.Arbitrary<FuzzRequest> {
  const validBody = operation.body ? exampleOf(operation.body.schema, target.own) : undefined;
  const { right, wrong } = doors(operation);
  const families = [
    { weight: 2, arbitrary: credentialMutations(operation, wrong) },
    { weight: 2, arbitrary: queryMutations(operation) },
    { weight: 2, arbitrary: headerMutations(operation) },
  ];
  // fetch sends no body with a GET.
  if (operation.method !== "GET")
    families.push({ weight: 4, arbitrary: bodyMutations(operation, validBody) });
  const path = pathMutations(operation, target.foreign);
  if (path) families.push({ weight: 3, arbitrary: path });
  const method = methodMutations(declaredMethods);
  if (method) families.push({ weight: 1, arbitrary: method });
  return fc
    .record({
      presented: fc.constantFrom(...right),
      mutations: fc.array(fc.oneof(...families), { minLength: 1, maxLength: 3 }),
    })
    .map(({ presented, mutations }) => {
      const draft: Draft = {
        method: operation.method,
        params: Object.fromEntries(
          operation.pathParams.map((name) => {
            const resource = resourceOf(name, operation.path);
            return [name, (resource && target.own[resource]) ?? randomUUID()];
          }),
        ),
        query: operation.query
          .filter((p) => p.required)
          .map((p) => `${p.name}=${encodeAny(String(exampleOf(p.schema, target.own, p.name)))}`),
        headers: { ...presented.headers },
        body:
          validBody === undefined ? { kind: "none" } : { kind: "json", value: structuredClone(validBody) },
      };
      if (operation.headers.some((h) => h.name === "idempotency-key")) {
        draft.headers["idempotency-key"] = "fresh";
      }
      for (const mutation of mutations) mutation.apply(draft);
      const only = mutations.length === 1 ? mutations[0] : undefined;
      return toRequest(operation, draft, {
        notes: mutations.map((mutation) => mutation.note),
        expected: presented.full ? only?.expected : undefined,
      });
    });
}

function toRequest(
  operation: Operation,
  draft: Draft,
  what: { notes: string[]; expected: Expected | undefined },
): FuzzRequest {
  const headers = { ...draft.headers };
  let body: string | undefined;
  if (draft.method !== "GET") {
    if (draft.body.kind === "json") {
      body = expandNested(JSON.stringify(draft.body.value));
      headers["content-type"] ??= "application/json";
    } else if (draft.body.kind === "raw") body = draft.body.text;
  }
  const query = draft.query.length > 0 ? `?${draft.query.join("&")}` : "";
  return {
    method: draft.method,
    path: `${fillPath(operation.path, draft.params)}${query}`,
    headers,
    body,
    notes: [`${operation.method} ${operation.path}`, ...what.notes],
    expected: what.expected,
  };
}

/**
 * Sends a fuzzed request with the credentials it names; a fresh Idempotency-Key is drawn here,
 * so that no two runs share one.
 */
export function send(api: ApiClient, request: FuzzRequest, credentials: Credentials): Promise<ApiResponse> {
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [
      name,
      value.replace(/@@(\w+)@@/g, (_, key: keyof Credentials) => credentials[key]),
    ]),
  );
  if (headers["idempotency-key"] === "fresh") headers["idempotency-key"] = randomUUID();
  return api.call(request.method, request.path, undefined, { headers, raw: request.body });
}
