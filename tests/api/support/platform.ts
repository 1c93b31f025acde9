import { sampleContents } from "@evalp/testing";
import { expect } from "vitest";
import type { ApiClient } from "./client.js";
import { ik, type Tenant } from "./fixtures.js";

/** The six component fields of a bundle and the content kind each names. */
export const FIELDS = {
  scorecard: "scorecard_version_id",
  experience: "experience_version_id",
  context: "context_version_id",
  guardrail: "guardrail_version_id",
  adaptive_policy: "adaptive_policy_version_id",
  report_template: "report_template_version_id",
} as const;

type Contents = ReturnType<typeof sampleContents>;

/** A template holding the six definitions of `contents`; returns it and the definition id by kind. */
export async function createTemplate(api: ApiClient, tenant: Tenant, contents: Contents = sampleContents()) {
  const created = await api.post(
    `${tenant.app}/templates`,
    {
      name: "Graduate intake",
      definitions: Object.entries(contents).map(([kind, content]) => ({
        business_id: `intake.${kind.replace("_", "-")}`,
        locale: "en",
        name: kind,
        content,
      })),
    },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const ids = Object.fromEntries(
    (created.body.definitions as { id: string; content: { kind: string } }[]).map((d) => [
      d.content.kind,
      d.id,
    ]),
  ) as Record<keyof Contents, string>;
  return { template: created.body, ids };
}

/** A draft bundle of a fresh template of `contents`. */
export async function createBundle(api: ApiClient, tenant: Tenant, contents?: Contents, name = "Intake") {
  const { ids } = await createTemplate(api, tenant, contents);
  const body = Object.fromEntries(
    Object.entries(FIELDS).map(([kind, field]) => [field, ids[kind as keyof Contents]]),
  );
  const bundle = await api.post(
    `${tenant.app}/bundles`,
    { name, ...body },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(bundle.status, JSON.stringify(bundle.body)).toBe(201);
  return { bundle: bundle.body, ids };
}

/** Moves a bundle to a status and returns the response. */
export function moveBundle(api: ApiClient, tenant: Tenant, bundleId: string, status: string) {
  return api.post(
    `${tenant.app}/bundles/${bundleId}/status`,
    { status },
    { token: tenant.token, idempotencyKey: ik() },
  );
}
