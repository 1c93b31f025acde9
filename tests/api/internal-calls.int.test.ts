import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import {
  createServiceTransport,
  fromConnectError,
  generateServiceKeySet,
  keySetConfig,
  metadataHeaders,
  mintServiceToken,
  schemaRoleUrl,
  serviceCaller,
  serviceSigningKey,
} from "@evalp/kit";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

// Inside the cluster an address is no credential, nor is being one of the platform's processes: a
// plane refuses a call without a token signed by a known process's key for this plane, refuses a
// process the RPC is not granted to, and re-checks what it owns whatever the caller says.
const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

/** A transport to control as the `caller` process, with a valid service token for control. */
const controlAs = (caller: Parameters<typeof serviceCaller>[1]) =>
  createServiceTransport(
    "control",
    () => stack.config.CONTROL_URL,
    5_000,
    serviceCaller(stack.config, caller),
  );

/** The contract's error of a call that must be refused. */
async function refusalOf(call: Promise<unknown>) {
  const error = await call.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return fromConnectError(error as ConnectError);
}

const environment = () => ({
  organizationId: tenant.organizationId,
  appId: tenant.appId,
  environmentId: tenant.environmentId,
});

describe("calls between the planes", () => {
  it("are refused without a service token of this cluster, whatever address they come from", async () => {
    const plain = createClient(
      QuotaService,
      createConnectTransport({ baseUrl: stack.config.CONTROL_URL, httpVersion: "2" }),
    );
    await expect(plain.getLimits({ environmentId: tenant.environmentId })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
    // A key of no process of this platform, naming itself the gateway.
    const otherCluster = serviceCaller(keySetConfig(generateServiceKeySet(["gateway"])), "gateway");
    const forged = createClient(
      QuotaService,
      createServiceTransport("control", () => stack.config.CONTROL_URL, 5_000, otherCluster),
    );
    await expect(forged.getLimits({ environmentId: tenant.environmentId })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  it("refuse a token the gateway signed for another plane", async () => {
    // The gateway's own key, but the token is for the webhooks plane: control does not take it.
    const gateway = serviceCaller(stack.config, "gateway");
    const misaddressed = createClient(
      QuotaService,
      createServiceTransport("webhooks", () => stack.config.CONTROL_URL, 5_000, gateway),
    );
    await expect(misaddressed.getLimits({ environmentId: tenant.environmentId })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  it("refuse a plane an RPC its table does not grant it: the webhooks process cannot reach API keys", async () => {
    const webhooks = controlAs("webhooks");
    const keys = createClient(ApiKeyService, webhooks);
    const asOwner = { headers: metadataHeaders({ requestId: "test" }) };
    await expect(
      keys.createApiKey({ environment: environment(), name: "minted", scopes: ["org:admin"] }, asOwner),
    ).rejects.toMatchObject({ code: Code.PermissionDenied });
    await expect(keys.listApiKeys({ environment: environment() }, asOwner)).rejects.toMatchObject({
      code: Code.PermissionDenied,
    });
    // What the webhooks plane does call is answered: an environment's limits.
    const limits = await createClient(QuotaService, webhooks).getLimits({
      environmentId: tenant.environmentId,
    });
    expect(limits.limits).toBeDefined();
    // Nor can its key pass for the gateway's: a token naming the gateway, signed by the webhooks key.
    const asGateway = await mintServiceToken(
      { name: "gateway", key: serviceSigningKey(stack.config, "webhooks") },
      "control",
    );
    const impostor = createClient(
      ApiKeyService,
      createConnectTransport({
        baseUrl: stack.config.CONTROL_URL,
        httpVersion: "2",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${asGateway}`);
            return next(req);
          },
        ],
      }),
    );
    await expect(impostor.listApiKeys({ environment: environment() })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  it("cannot mint a key wider than its actor, though they carry a valid token: control checks the actor's own scopes", async () => {
    const narrow = await createKey(api, tenant, ["org:read", "keys:write"], "narrow");
    const keys = createClient(ApiKeyService, controlAs("gateway"));
    const refusal = (actor: { kind: string; id: string } | undefined, scopes: string[]) =>
      refusalOf(
        keys.createApiKey(
          { environment: environment(), name: "minted", scopes },
          { headers: metadataHeaders({ requestId: "test", actor }) },
        ),
      );
    // An actor that is the narrow key asks for org:admin.
    const asKey = await refusal({ kind: "api_key", id: narrow.id }, ["org:admin"]);
    expect(asKey.code).toBe("forbidden");
    expect(asKey.context).toEqual({ required_scope: "org:admin" });
    // No actor at all can do nothing.
    expect((await refusal(undefined, ["org:read"])).code).toBe("forbidden");
    // Within the actor's scopes, it is minted.
    const minted = await keys.createApiKey(
      { environment: environment(), name: "within", scopes: ["org:read"] },
      { headers: metadataHeaders({ requestId: "test", actor: { kind: "api_key", id: narrow.id } }) },
    );
    expect(minted.apiKey?.scopes).toEqual(["org:read"]);
  });

  it("hold an import to the interface's 1 to 100 items, though it carries a valid token", async () => {
    const subjects = createClient(SubjectService, controlAs("gateway"));
    const items = (count: number) =>
      Array.from({ length: count }, (_, i) => ({ externalId: `inside-${i}`, identityMode: "anonymous" }));
    const key = await createKey(api, tenant, ["subjects:write"], "inside");
    const headers = metadataHeaders({ requestId: "test", actor: { kind: "api_key", id: key.id } });
    for (const count of [0, 101]) {
      const problem = await refusalOf(
        subjects.importSubjects({ environment: environment(), items: items(count) }, { headers }),
      );
      expect(problem.code).toBe("validation_error");
      // The same item the gateway renders for the same body, the items it was given as its input.
      const [type, words, bound] =
        count === 0
          ? ["too_short", "at least 1 item", { min_length: 1 }]
          : ["too_long", "at most 100 items", { max_length: 100 }];
      expect(problem.context).toEqual({
        detail: [
          {
            type,
            loc: ["body", "items"],
            msg: `List should have ${words} after validation, not ${count}`,
            input: items(count).map((item) => ({
              external_id: item.externalId,
              identity_mode: item.identityMode,
            })),
            ctx: { field_type: "List", ...bound, actual_length: count },
          },
        ],
      });
    }
    const none = await stack.db.query(
      "SELECT 1 FROM subjects WHERE environment_id = $1 AND external_id LIKE 'inside-%'",
      [tenant.environmentId],
    );
    expect(none.rowCount).toBe(0);
    const imported = await subjects.importSubjects(
      { environment: environment(), items: items(100) },
      { headers },
    );
    expect(imported.receipts.filter((receipt) => receipt.errorCode === "")).toHaveLength(100);
  });

  it("let a plane report only its own erasure, and only as a plane that erases", async () => {
    const subjects = createClient(SubjectService, controlAs("interview"));
    const report = (plane: string) =>
      refusalOf(
        subjects.completeSubjectErasure({
          environmentId: tenant.environmentId,
          subjectId: crypto.randomUUID(),
          plane,
        }),
      );
    // The interview plane's token, reporting for the webhooks plane.
    expect((await report("webhooks")).code).toBe("forbidden");
    expect((await report("mailer")).code).toBe("validation_error");
    // For itself, of a subject with no erasure: 404.
    expect((await report("interview")).code).toBe("not_found");
  });
});

describe("the planes' Postgres roles", () => {
  it("give each plane its own schema and no other: the webhooks role can neither read nor write control's API keys", async () => {
    const asWebhooks = new pg.Client({ connectionString: schemaRoleUrl(stack.databaseUrl, "webhooks") });
    await asWebhooks.connect();
    try {
      await expect(asWebhooks.query("SELECT count(*) FROM control.api_keys")).rejects.toMatchObject({
        code: "42501",
      });
      await expect(
        asWebhooks.query("INSERT INTO control.api_keys (id) VALUES (gen_random_uuid())"),
      ).rejects.toMatchObject({ code: "42501" });
      // Its own schema it owns.
      const own = await asWebhooks.query("SELECT count(*)::int AS n FROM webhooks.webhook_endpoints");
      expect(own.rows[0].n).toBeGreaterThanOrEqual(0);
    } finally {
      await asWebhooks.end();
    }
  });

  it("connect each plane as its schema's role", async () => {
    const roles = await Promise.all(
      (["control", "platform", "interview", "webhooks"] as const).map(async (schema) => {
        const { rows } = await stack.pool(schema).query<{ user: string }>("SELECT current_user AS user");
        return rows[0]?.user;
      }),
    );
    expect(roles).toEqual(["evalp_control", "evalp_platform", "evalp_interview", "evalp_webhooks"]);
  });
});
