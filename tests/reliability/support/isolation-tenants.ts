import { AGENT_SCOPE, SCOPES } from "@evalp/kit";
import { expect } from "vitest";
import type { ApiClient } from "../../api/support/client.js";
import { createKey, createTenant, ik, type Tenant } from "../../api/support/fixtures.js";
import { createEvaluation, createSession, createSubject } from "../../api/support/interview.js";
import { createBundle, createTemplate, moveBundle } from "../../api/support/platform.js";
import { createEndpoint } from "../../api/support/webhooks.js";

/** Every scope an API key may hold together (the agent scope is granted alone, docs/authentication.md). */
export const KEY_SCOPES = SCOPES.filter((scope) => scope !== AGENT_SCOPE);

/**
 * A tenant with one resource of every kind a path or body can name, by the resource name of
 * `resourceOf` (`organization`, `app`, `environment`, `key`, `subject`, `program`, `template`,
 * `bundle`, `definition:<kind>`, `webhook`, `delivery`, `evaluation`, `session` (its participant
 * session)), and the credentials to
 * act in it: the owner's session and an API key with every scope.
 */
export type PopulatedTenant = {
  tenant: Tenant;
  ids: Record<string, string>;
  apiKey: string;
  /** A participant session of the tenant's evaluation, not started. */
  participant: { sessionId: string; token: string };
};

/** Signs up a tenant and creates one of everything in its environment. */
export async function populatedTenant(api: ApiClient): Promise<PopulatedTenant> {
  const tenant = await createTenant(api);
  const auth = { token: tenant.token };
  const [key, other, subject, program, template, bundle, endpoint] = await Promise.all([
    createKey(api, tenant, KEY_SCOPES),
    createKey(api, tenant, ["org:read"], "another"),
    createSubject(api, tenant),
    api.post(`${tenant.env}/programs`, { name: "Onboarding" }, { ...auth, idempotencyKey: ik() }),
    createTemplate(api, tenant),
    createBundle(api, tenant),
    // Port 9 (discard) refuses connections: a delivery fails at once and waits an hour to retry.
    createEndpoint(api, tenant, { url: "http://127.0.0.1:9/hook", event_types: ["webhook.test"] }),
  ]);
  expect(program.status, JSON.stringify(program.body)).toBe(201);
  for (const status of ["validated", "published"]) {
    const moved = await moveBundle(api, tenant, bundle.bundle.id, status);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  }
  const delivery = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
    ...auth,
    idempotencyKey: ik(),
  });
  expect(delivery.status, JSON.stringify(delivery.body)).toBe(200);
  const evaluation = await createEvaluation(api, { tenant, subjectId: subject, bundleId: bundle.bundle.id });
  const session = await createSession(api, tenant, evaluation.id);
  return {
    tenant,
    apiKey: key.secret,
    participant: { sessionId: session.session_id, token: session.participant_token },
    ids: {
      organization: tenant.organizationId,
      app: tenant.appId,
      environment: tenant.environmentId,
      key: other.id,
      subject,
      program: program.body.id,
      template: template.template.id,
      bundle: bundle.bundle.id,
      ...Object.fromEntries(Object.entries(template.ids).map(([kind, id]) => [`definition:${kind}`, id])),
      webhook: endpoint.id,
      delivery: delivery.body.id,
      evaluation: evaluation.id,
      session: session.session_id,
    },
  };
}
