// The bench's tenant, made through the API as a user would: an organization, an app, an
// environment with an API key, and C2's two environments whose imports have webhook endpoints on
// the receiver; every quota raised so that the bench's many fresh subjects never meet one.
import { randomUUID } from "node:crypto";

async function json(response) {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} ${response.url}: ${text}`);
  return JSON.parse(text);
}

/** Each C2 event goes to this many endpoints (all on the receiver): deliveries = events × FAN_OUT. */
export const FAN_OUT = 10;

/** `suffix` makes the signup's email the run's own. */
export async function setUpTenant(base, receiverUrl, suffix) {
  const post = (path, body, headers = {}) =>
    fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": randomUUID(), ...headers },
      body: JSON.stringify(body),
    }).then(json);
  const signup = await post("/auth/signup", {
    email: `bench-${suffix}@example.com`,
    password: "correct horse battery staple",
    organization_name: "Bench",
  });
  const auth = { authorization: `Bearer ${signup.access_token}` };
  const org = `/v1/organizations/${signup.organization_id}`;
  const app = await post(`${org}/apps`, { slug: "bench", name: "Bench" }, auth);
  const appPath = `${org}/apps/${app.id}`;
  const env = await post(`${appPath}/environments`, { slug: "production", name: "Production" }, auth);
  const envPath = `${appPath}/environments/${env.id}`;
  const key = await post(
    `${envPath}/api-keys`,
    { name: "bench", scopes: ["org:read", "subjects:write"] },
    auth,
  );
  // Raise the quotas so that fresh subjects never hit the active_subjects limit.
  const raiseQuotas = async (path) => {
    const quotas = await fetch(`${base}${path}/quotas`, { headers: auth }).then(json);
    const limits = Object.fromEntries(Object.keys(quotas.limits).map((name) => [name, 1_000_000]));
    await fetch(`${base}${path}/quotas`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": randomUUID() },
      body: JSON.stringify({ expected_revision: quotas.revision, limits }),
    }).then(json);
  };
  await raiseQuotas(envPath);
  // C2 imports into environments of their own, whose `subject.imported` events have endpoints:
  // FAN_OUT of them for throughput, one for latency.
  const webhookEnvironment = async (slug, paths) => {
    const created = await post(`${appPath}/environments`, { slug, name: slug }, auth);
    const path = `${appPath}/environments/${created.id}`;
    await raiseQuotas(path);
    const envKey = await post(`${path}/api-keys`, { name: slug, scopes: ["subjects:write"] }, auth);
    let secret = "";
    for (const at of paths) {
      const endpoint = await post(
        `${path}/webhooks`,
        { url: `${receiverUrl}${at}`, event_types: ["subject.imported"] },
        auth,
      );
      secret = endpoint.secret;
    }
    return { path, apiKey: envKey.secret, secret };
  };
  const fanOut = await webhookEnvironment(
    "fan-out",
    Array.from({ length: FAN_OUT }, (_, i) => `/c2/${i}`),
  );
  const latency = await webhookEnvironment("latency", ["/c2-latency"]);
  return { appPath, envPath, apiKey: key.secret, fanOut, latency };
}
