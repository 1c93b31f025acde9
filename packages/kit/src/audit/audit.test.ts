import { describe, expect, it } from "vitest";
import { newId } from "../core/ids.js";
import { createLogger } from "../telemetry/logger.js";
import { auditRecord, parseAuditRecord } from "./audit.js";

const logger = createLogger("test", "silent");

describe("parseAuditRecord", () => {
  it("takes every record the planes make, as it travels (JSON)", () => {
    const contexts = [
      { requestId: "req_1", actor: { kind: "user", id: newId() }, logger },
      { requestId: null, actor: null, logger },
      { requestId: "", actor: { kind: "api_key", id: newId() }, logger },
    ];
    for (const context of contexts) {
      const record = auditRecord(context, {
        organizationId: newId(),
        appId: newId(),
        environmentId: null,
        action: "bundle.published",
        resourceType: "bundle",
        resourceId: newId(),
        metadata: { version: 3, name: "x" },
      });
      expect(parseAuditRecord(JSON.parse(JSON.stringify(record)))).toEqual(record);
    }
  });

  it("refuses what is no audit record", () => {
    const record = auditRecord(
      { requestId: "req_1", actor: null, logger },
      { organizationId: newId(), action: "a.b", resourceType: "t", resourceId: "r" },
    );
    for (const broken of [
      null,
      "text",
      { ...record, organization_id: "not-a-uuid" },
      { ...record, actor_id: 42 },
      { ...record, action: "" },
      { ...record, metadata: [] },
      { ...record, created_at: "yesterday" },
      { ...record, extra: true },
      { ...record, resource_id: "r".repeat(257) },
    ]) {
      expect(parseAuditRecord(broken), JSON.stringify(broken)).toBeNull();
    }
  });
});
