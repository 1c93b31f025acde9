import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createServiceTransport, fromConnectError, metadataHeaders, serviceCaller } from "@evalp/kit";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

// Inside the cluster an address is no credential: a plane refuses a call without a service token
// of this cluster, and re-checks what it owns whatever the caller says.
const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

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
    const otherCluster = serviceCaller(
      { SERVICE_TOKEN_SECRETS: "k1:another-cluster-secret-0123456789abcdef" },
      "gateway",
    );
    const forged = createClient(
      QuotaService,
      createServiceTransport(() => stack.config.CONTROL_URL, 5_000, otherCluster),
    );
    await expect(forged.getLimits({ environmentId: tenant.environmentId })).rejects.toMatchObject({
      code: Code.Unauthenticated,
    });
  });

  it("cannot mint a key wider than its actor, though they carry a valid token: control checks the actor's own scopes", async () => {
    const narrow = await createKey(api, tenant, ["org:read", "keys:write"], "narrow");
    const keys = createClient(
      ApiKeyService,
      createServiceTransport(() => stack.config.CONTROL_URL, 5_000, serviceCaller(stack.config, "gateway")),
    );
    const refusal = async (actor: { kind: string; id: string } | undefined, scopes: string[]) => {
      const error = await keys
        .createApiKey(
          { environment: environment(), name: "minted", scopes },
          { headers: metadataHeaders({ requestId: "test", actor }) },
        )
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(ConnectError);
      return fromConnectError(error as ConnectError);
    };
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
});
