import { createHash } from "node:crypto";
import { sampleContents } from "@evalp/testing";
import canonicalize from "canonicalize";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { createTemplate } from "./support/platform.js";
import { useStack } from "./support/stack.js";

const context = useStack();
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ api } = context);
  tenant = await createTenant(api);
});

const hashOf = (content: unknown) =>
  `sha256:${createHash("sha256")
    .update(canonicalize(content) ?? "")
    .digest("hex")}`;

describe("templates and definitions", () => {
  it("creates a template whose definitions carry the RFC 8785 content hash, revision 1", async () => {
    const { template } = await createTemplate(api, tenant);
    expect(template).toMatchObject({ id: expect.any(String), app_id: tenant.appId, name: "Graduate intake" });
    expect(template.definitions).toHaveLength(6);
    const scorecard = template.definitions.find(
      (d: { content: { kind: string } }) => d.content.kind === "scorecard",
    );
    expect(scorecard).toEqual({
      id: expect.any(String),
      app_id: tenant.appId,
      business_id: "intake.scorecard",
      content: sampleContents().scorecard,
      content_hash: hashOf(sampleContents().scorecard),
      locale: "en",
      name: "scorecard",
      revision: 1,
      created_at: expect.any(String),
      created_by_user_id: expect.any(String),
    });
    const read = await api.get(`${tenant.app}/templates/${template.id}`, { token: tenant.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(template);
  });

  it("adds revisions per (business_id, locale)", async () => {
    const { template } = await createTemplate(api, tenant);
    const add = (locale: string, weight: number) =>
      api.post(
        `${tenant.app}/templates/${template.id}/definitions`,
        {
          business_id: "intake.context",
          locale,
          name: "context",
          content: { kind: "context", variables: { weight } },
        },
        { token: tenant.token, idempotencyKey: ik() },
      );
    expect((await add("en", 2)).body.revision).toBe(2);
    expect((await add("en", 3)).body.revision).toBe(3);
    const german = await add("de-DE", 1);
    expect(german.status).toBe(201);
    expect(german.body.revision).toBe(1);
    const revisions = await Promise.all([4, 5, 6, 7].map((weight) => add("en", weight)));
    expect(revisions.map((r) => r.body.revision).sort()).toEqual([4, 5, 6, 7]);
  });

  it("checks only the kind at creation, with the Pydantic shape, and refuses repeated (business_id, locale)", async () => {
    const bad = await api.post(
      `${tenant.app}/templates`,
      {
        name: "Bad",
        definitions: [
          { business_id: "Bad Id", locale: "english!", name: "x", content: { kind: "essay" } },
          { business_id: "ok", locale: "en", name: "x", content: "not an object" },
        ],
      },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(bad.status).toBe(422);
    expect(
      bad.body.detail.map((d: { loc: string[]; type: string }) => `${d.loc.join(".")}:${d.type}`),
    ).toEqual([
      "body.definitions.0.business_id:string_pattern_mismatch",
      "body.definitions.0.locale:string_pattern_mismatch",
      "body.definitions.0.content.kind:enum",
      "body.definitions.1.content:dict_type",
    ]);
    const repeated = await api.post(
      `${tenant.app}/templates`,
      {
        name: "Twice",
        definitions: [
          { business_id: "a", locale: "en", name: "x", content: { kind: "context", variables: {} } },
          { business_id: "a", locale: "en", name: "y", content: { kind: "context", variables: {} } },
        ],
      },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(repeated.body.detail).toEqual([
      expect.objectContaining({ type: "value_error", loc: ["body", "definitions", "1", "business_id"] }),
    ]);
  });

  it("clones the latest revision of each definition with a prefixed business id (#11)", async () => {
    const { template } = await createTemplate(api, tenant);
    const newer = { kind: "context", variables: { as_of: "2026-06-01" } };
    await api.post(
      `${tenant.app}/templates/${template.id}/definitions`,
      { business_id: "intake.context", locale: "en", name: "context v2", content: newer },
      { token: tenant.token, idempotencyKey: ik() },
    );
    const clone = await api.post(
      `${tenant.app}/templates/${template.id}/clone`,
      { business_id_prefix: "acme" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(clone.status).toBe(201);
    expect(clone.body.template_id).not.toBe(template.id);
    expect(clone.body.definitions).toHaveLength(6);
    const context = clone.body.definitions.find(
      (d: { business_id: string }) => d.business_id === "acme.intake.context",
    );
    expect(context).toMatchObject({
      revision: 1,
      content: newer,
      content_hash: hashOf(newer),
      name: "context v2",
    });
    expect(context.published_at).toBeUndefined();
    for (const definition of clone.body.definitions) {
      expect(template.definitions.map((d: { id: string }) => d.id)).not.toContain(definition.id);
    }
    const badPrefix = await api.post(
      `${tenant.app}/templates/${template.id}/clone`,
      { business_id_prefix: "-Bad" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(badPrefix.body.detail[0]).toMatchObject({
      type: "string_pattern_mismatch",
      loc: ["body", "business_id_prefix"],
    });
  });

  it("answers 404 for another app's template and another organization's app, and reads with bundles:read", async () => {
    const { template } = await createTemplate(api, tenant);
    const other = await createTenant(api);
    expectError(
      await api.get(`${other.app}/templates/${template.id}`, { token: other.token }),
      404,
      "not_found",
    );
    // A path that puts this organization's id before another organization's app.
    expectError(
      await api.get(`${tenant.org}/apps/${other.appId}/templates/${template.id}`, { token: tenant.token }),
      404,
      "not_found",
    );
    const reader = await createKey(api, tenant, ["bundles:read"]);
    expect((await api.get(`${tenant.app}/templates/${template.id}`, { token: reader.secret })).status).toBe(
      200,
    );
    const writer = await createKey(api, tenant, ["templates:write"]);
    expect((await api.get(`${tenant.app}/templates/${template.id}`, { token: writer.secret })).status).toBe(
      200,
    );
    const neither = await createKey(api, tenant, ["org:read"]);
    const denied = await api.get(`${tenant.app}/templates/${template.id}`, { token: neither.secret });
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "bundles:read" });
  });

  it("audits the platform's mutations in the organization's trail, with the request id", async () => {
    const requestId = "audit-template-1";
    const created = await api.post(
      `${tenant.app}/templates`,
      {
        name: "Audited",
        definitions: [
          { business_id: "audited", locale: "en", name: "c", content: { kind: "context", variables: {} } },
        ],
      },
      { token: tenant.token, idempotencyKey: ik(), headers: { "x-request-id": requestId } },
    );
    expect(created.status).toBe(201);
    // The record travels through the platform's outbox and the AUDIT stream to the control plane.
    await vi.waitFor(
      async () => {
        const trail = await api.get(`${tenant.org}/audit-events?action=template.created`, {
          token: tenant.token,
        });
        expect(trail.body.items.map((e: { resource_id: string }) => e.resource_id)).toContain(
          created.body.id,
        );
      },
      { timeout: 10_000, interval: 100 },
    );
    const trail = await api.get(`${tenant.org}/audit-events?action=template.created`, {
      token: tenant.token,
    });
    const event = trail.body.items.find((e: { resource_id: string }) => e.resource_id === created.body.id);
    expect(event).toMatchObject({
      app_id: tenant.appId,
      actor_kind: "session",
      resource_type: "template",
      request_id: requestId,
      metadata: { name: "Audited" },
    });
  });
});
