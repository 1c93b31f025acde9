import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { ApiClient } from "./client.js";

/** A fresh Idempotency-Key. */
export const ik = () => randomUUID();

/** A signed-up user with an organization, an app and an environment, as the journey starts. */
export type Tenant = {
  email: string;
  password: string;
  token: string;
  organizationId: string;
  appId: string;
  environmentId: string;
  org: string;
  app: string;
  env: string;
};

let counter = 0;

export async function signUp(api: ApiClient, name = "Acme") {
  counter += 1;
  const email = `user${counter}-${randomUUID().slice(0, 8)}@example.com`;
  const password = "correct horse battery staple";
  const signup = await api.post("/auth/signup", { email, password, organization_name: name });
  expect(signup.status).toBe(201);
  return {
    email,
    password,
    token: signup.body.access_token as string,
    organizationId: signup.body.organization_id as string,
  };
}

export async function createTenant(api: ApiClient, organizationName = "Acme"): Promise<Tenant> {
  const user = await signUp(api, organizationName);
  const org = `/v1/organizations/${user.organizationId}`;
  const app = await api.post(
    `${org}/apps`,
    { slug: `app-${counter}`, name: "Survey" },
    { token: user.token, idempotencyKey: ik() },
  );
  expect(app.status).toBe(201);
  const appPath = `${org}/apps/${app.body.id}`;
  const env = await api.post(
    `${appPath}/environments`,
    { slug: "production", name: "Production" },
    { token: user.token, idempotencyKey: ik() },
  );
  expect(env.status).toBe(201);
  return {
    ...user,
    appId: app.body.id,
    environmentId: env.body.id,
    org,
    app: appPath,
    env: `${appPath}/environments/${env.body.id}`,
  };
}

/** Creates an API key in the tenant's environment and returns its secret and summary. */
export async function createKey(api: ApiClient, tenant: Tenant, scopes: string[], name = "backend") {
  const created = await api.post(
    `${tenant.env}/api-keys`,
    { name, scopes },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(created.status).toBe(201);
  return { secret: created.body.secret as string, id: created.body.id as string, body: created.body };
}

/** Asserts an application error body (docs/errors.md) and returns its detail. */
export function expectError(
  response: { status: number; body: any; headers: Headers } | undefined,
  status: number,
  code: string,
) {
  if (!response) throw new Error(`expected a ${status} ${code} response, got none`);
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(Object.keys(response.body)).toEqual(["detail"]);
  expect(response.body.detail).toMatchObject({
    code,
    message: expect.any(String),
    context: expect.any(Object),
  });
  expect(response.body.detail.request_id).toBe(response.headers.get("x-request-id"));
  return response.body.detail as {
    code: string;
    message: string;
    context: Record<string, unknown>;
    request_id: string;
  };
}
