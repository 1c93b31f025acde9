import { type Receiver, startReceiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { checkEvents, type EventCatalog, loadEventCatalog } from "./support/event-catalog.js";
import { createTenant, ik, type Tenant } from "./support/fixtures.js";
import { consentedInterview, interviewSetup } from "./support/interview.js";
import { sentMail, tokenIn } from "./support/mail.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, importSubjects, setQuota } from "./support/webhooks.js";

const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "true" });
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
let catalog: EventCatalog;
let receiver: Receiver;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  catalog = await loadEventCatalog(api);
  receiver = await startReceiver();
  checkEvents(receiver, catalog);
  receiver.respond((request) => ({ status: request.path === "/gone" ? 410 : 204 }));
});
afterAll(async () => {
  await receiver?.close();
});

/** Invites a new member and accepts: `membership.created`, then `invitation.accepted`. */
async function inviteAndAccept() {
  const email = `invitee-${ik()}@example.com`;
  const invited = await api.post(
    `${tenant.org}/memberships`,
    { email, role: "member" },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(invited.status, JSON.stringify(invited.body)).toBe(201);
  const mail = sentMail(stack.config.MAIL_DIR).find((sent) => sent.to === email);
  const accepted = await api.post(
    "/v1/invitations/accept",
    { token: tokenIn(mail), password: "invitee's password" },
    { idempotencyKey: ik() },
  );
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
}

/** Records a continuous answer of a new program: `continuous_answer.recorded`. */
async function recordContinuousAnswer(subjectId: string) {
  const program = await api.post(
    `${tenant.env}/programs`,
    { name: "Pulse" },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(program.status, JSON.stringify(program.body)).toBe(201);
  const recorded = await api.post(
    `${tenant.env}/continuous-evaluation/answers`,
    {
      subject_id: subjectId,
      program_id: program.body.id,
      question_id: "q1",
      client_answer_id: "ca-1",
      answer: { value: 4 },
    },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
}

/** Sends a test event to an endpoint: `webhook.test`. */
async function testEndpoint(endpointId: string) {
  const tested = await api.post(`${tenant.env}/webhooks/${endpointId}/test`, undefined, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(tested.status, JSON.stringify(tested.body)).toBe(200);
}

describe("the event catalog (/openapi.json's webhooks)", () => {
  it("lists exactly the event types the platform delivers, and every delivered body matches its schema", async () => {
    const all = await createEndpoint(api, tenant, { url: `${receiver.url}/all`, event_types: ["*"] });

    // Control: subjects, quotas, memberships. Platform: bundles (validated, published), answers.
    const setup = await interviewSetup(api, tenant);
    await importSubjects(api, tenant, [`catalog-${ik()}`]);
    await setQuota(api, tenant, "programs", 50);
    await inviteAndAccept();
    await recordContinuousAnswer(setup.subjectId);
    // Interview: started (and an agent requested), then ended by the sample guardrail and scored.
    const { participant } = await consentedInterview(api, setup);
    const ended = await participant.answer("q1", { value: -2 });
    expect(ended.body.interview, JSON.stringify(ended.body)).toMatchObject({ status: "ended" });
    // Webhooks: a test event, and an endpoint the platform disables on its receiver's 410.
    await testEndpoint(all.id);
    const gone = await createEndpoint(api, tenant, {
      url: `${receiver.url}/gone`,
      event_types: ["webhook.test"],
    });
    await testEndpoint(gone.id);
    // Control again: an erasure, requested then completed by every plane.
    const erasedSubject = await importSubjects(api, tenant, [`erased-${ik()}`]);
    const erased = await api.call(
      "DELETE",
      `${tenant.env}/subjects/${erasedSubject.receipts[0]?.subject_id}`,
      undefined,
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(erased.status, JSON.stringify(erased.body)).toBe(202);

    const typesAt = (path: string) =>
      new Set(receiver.at(path).map((request) => JSON.parse(request.body).type));
    await vi.waitFor(() => expect([...typesAt("/all")].sort()).toEqual([...catalog.types].sort()), {
      timeout: 20_000,
      interval: 100,
    });
    expect(catalog.types.length).toBeGreaterThan(0);
    for (const request of receiver.requests) expect(catalog.problems(request), request.body).toEqual([]);
  });

  it("is open to fields added later: a consumer validating with the document accepts an extra field in every type's body", () => {
    const byType = new Map(receiver.at("/all").map((request) => [JSON.parse(request.body).type, request]));
    expect([...byType.keys()].sort()).toEqual([...catalog.types].sort());
    for (const [type, delivered] of byType) {
      const event = JSON.parse(delivered.body);
      const later = { ...event, added_later: "x", data: { ...event.data, added_later: { any: true } } };
      expect(catalog.accepts(event), type).toBe(true);
      expect(catalog.accepts(later), type).toBe(true);
      // The platform itself still sends only what the document names (the strict check).
      expect(catalog.problems({ ...delivered, body: JSON.stringify(later) }).length, type).toBeGreaterThan(0);
      // Open to additions, not to changes: a field of the wrong type is still refused.
      expect(catalog.accepts({ ...event, id: 42 }), type).toBe(false);
    }
  });

  it("reports a body the document does not describe, and a type it does not list", () => {
    const delivered = receiver.at("/all")[0];
    if (!delivered) throw new Error("nothing was delivered");
    const event = JSON.parse(delivered.body);
    const extra = { ...delivered, body: JSON.stringify({ ...event, data: { ...event.data, extra: 1 } }) };
    expect(catalog.problems(extra)).toEqual([expect.stringContaining("must NOT have additional properties")]);
    const unknown = { ...delivered, body: JSON.stringify({ ...event, type: "subject.deleted" }) };
    expect(catalog.problems(unknown)).toEqual(['type "subject.deleted" is not in the document\'s webhooks']);
    const unsigned = { ...delivered, headers: { ...delivered.headers, "webhook-signature": "v2,nope" } };
    expect(catalog.problems(unsigned)).toEqual([expect.stringContaining("header webhook-signature")]);
  });
});
