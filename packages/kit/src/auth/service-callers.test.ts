import { HealthService } from "@evalp/proto/common/v1/health";
import { UsageService } from "@evalp/proto/common/v1/usage";
import { ApiKeyService } from "@evalp/proto/control/v1/api_key";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { describe, expect, it } from "vitest";
import { callerTable } from "./service-callers.js";

describe("callerTable", () => {
  const table = callerTable({
    gateway: [ApiKeyService, QuotaService],
    webhooks: [QuotaService.method.getLimits],
  });

  it("allows a caller the services and the single methods granted to it, nothing else", () => {
    expect(table.allows("evalp.control.v1.ApiKeyService", "CreateApiKey", "gateway")).toBe(true);
    expect(table.allows("evalp.control.v1.QuotaService", "GetLimits", "webhooks")).toBe(true);
    expect(table.allows("evalp.control.v1.QuotaService", "UpdateQuotas", "webhooks")).toBe(false);
    expect(table.allows("evalp.control.v1.ApiKeyService", "CreateApiKey", "webhooks")).toBe(false);
    expect(table.allows(UsageService.typeName, "CountUsage", "gateway")).toBe(false);
  });

  it("leaves readiness and reflection to every caller with a valid token", () => {
    expect(table.allows(HealthService.typeName, "Check", "webhooks")).toBe(true);
    expect(table.allows("grpc.reflection.v1.ServerReflection", "ServerReflectionInfo", "operator")).toBe(
      true,
    );
  });

  it("lists every RPC granted and its callers", () => {
    expect(table.entries().get("evalp.control.v1.QuotaService/GetLimits")).toEqual(["gateway", "webhooks"]);
    expect(table.entries().get("evalp.control.v1.QuotaService/UpdateQuotas")).toEqual(["gateway"]);
    expect(table.entries().has("evalp.common.v1.UsageService/CountUsage")).toBe(false);
  });
});
