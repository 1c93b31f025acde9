import { startReceiver } from "@evalp/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { agentInterview } from "./support/agent.js";
import {
  expectAccessible,
  launchBrowser,
  onStack,
  openPage,
  PHONE,
  poll,
  screenshotAtBothWidths,
} from "./support/browser.js";
import type { ApiClient } from "./support/client.js";
import { logInToConsole, openSection } from "./support/console.js";
import { createKey, createTenant, ik, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createSubject,
  type InterviewSetup,
  interviewSetup,
  openSocket,
} from "./support/interview.js";
import { deleteKeys } from "./support/redis.js";
import { type Stack, useStack } from "./support/stack.js";
import { waitForDelivery } from "./support/webhooks.js";

// The console's operations (docs/console.md), driven in the machine's Chromium: keys, webhook
// endpoints and deliveries, evaluations, subjects, analytics, quotas and the audit trail, and the
// hosted interview page run by an agent. A failed
// delivery waits a minute before its next attempt: long enough to recover it from the console.
// An agent whose socket closes pauses the interview after a second rather than the contract's 10 s.
const context = useStack({
  WEBHOOK_ALLOW_PRIVATE: "true",
  WEBHOOK_RETRY_SCHEDULE_MS: "60000",
  AGENT_DISCONNECT_PAUSE_MS: "1000",
});
let stack: Stack;
let api: ApiClient;
let browser: Browser;

beforeAll(async () => {
  ({ stack, api } = context);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

// Every test comes from 127.0.0.1: the per-address attempt counters start empty for each.
beforeEach(async () => {
  await deleteKeys(stack.redis, `${stack.config.REDIS_KEY_PREFIX}attempts:*`);
});

async function consoleOf(tenant: Tenant, viewport?: { width: number; height: number }) {
  const opened = await openPage(browser, viewport);
  await logInToConsole(opened.page, stack.url, tenant);
  return opened;
}

/** An interview answered and finished; its result once scored. */
async function scoredInterview(setup: InterviewSetup) {
  const { evaluation, participant } = await consentedInterview(api, setup);
  for (const [question, answer] of [
    ["q1", { value: 4 }],
    ["q2", { option_id: "a" }],
    ["q3", { value: 4 }],
  ] as const) {
    expect((await participant.answer(question, answer)).status).toBe(200);
  }
  expect((await participant.finish()).status).toBe(200);
  const path = `${setup.tenant.env}/evaluations/${evaluation.id}`;
  await vi.waitFor(
    async () => expect((await api.get(`${path}/result`, { token: setup.tenant.token })).status).toBe(200),
    { timeout: 15_000, interval: 100 },
  );
  return evaluation;
}

const statusText = (page: Page) => page.getByRole("status").allTextContents();

describe("API keys in the console", () => {
  it("revokes a key only once confirmed, after which the key is refused", async () => {
    const tenant = await createTenant(api);
    const key = await createKey(api, tenant, ["evaluations:read"], "reporting");
    expect((await api.get(`${tenant.env}/evaluations`, { apiKey: key.secret })).status).toBe(200);

    const { page, problems } = await consoleOf(tenant);
    await openSection(page, "API keys");
    const keys = page.getByRole("region", { name: "API keys in Production" });
    const row = keys.locator(`tr[data-key="${key.id}"]`);
    await poll(() => row.count()).toBe(1);
    // The secret is never listed: only its prefix.
    expect(await keys.textContent()).not.toContain(key.secret);

    await row.getByRole("button", { name: "Revoke reporting" }).click();
    await expectAccessible(page);
    await row.getByRole("button", { name: "Keep it" }).click();
    expect((await api.get(`${tenant.env}/evaluations`, { apiKey: key.secret })).status).toBe(200);

    await row.getByRole("button", { name: "Revoke reporting" }).click();
    await row.getByRole("button", { name: "Yes, revoke reporting" }).click();
    await poll(() => row.textContent()).toContain("revoked");
    await poll(() => statusText(page)).toContain("The key reporting is revoked: calls with it now get 401.");
    expect((await api.get(`${tenant.env}/evaluations`, { apiKey: key.secret })).status).toBe(401);
    await screenshotAtBothWidths(page, "console-keys");
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("webhooks in the console", () => {
  it("creates, edits, tests, rotates and recovers an endpoint; filters deliveries and shows attempts", async () => {
    const tenant = await createTenant(api);
    const receiver = await startReceiver();
    receiver.respond(() => ({ status: 500 }));
    try {
      const { page, problems } = await consoleOf(tenant);
      await openSection(page, "Webhooks");
      const endpoints = page.getByRole("region", { name: "Webhook endpoints in Production" });
      await poll(() => endpoints.getByText("No webhook endpoint yet", { exact: false }).count()).toBe(1);
      await expectAccessible(page);

      // Created: the signing secret shown once.
      const form = endpoints.getByRole("form", { name: "Add a webhook endpoint in Production" });
      await form.getByLabel("Endpoint URL").fill(`${receiver.url}/hook`);
      await form.getByRole("button", { name: "Add the endpoint" }).click();
      await poll(() => statusText(page)).toContain("Choose at least one event type (or * for every event).");
      await form.getByRole("checkbox", { name: "webhook.test" }).check();
      await form.getByRole("button", { name: "Add the endpoint" }).click();
      const secret = endpoints.getByLabel("Signing secret");
      await poll(() => secret.count()).toBe(1);
      const first = await secret.inputValue();
      expect(first).toMatch(/^whsec_/);
      const listed = await api.get(`${tenant.env}/webhooks`, { token: tenant.token });
      expect(listed.body.items).toHaveLength(1);
      const endpoint = listed.body.items[0] as { id: string; url: string };
      const card = endpoints.getByRole("listitem", { name: `Endpoint ${endpoint.url}` });
      await poll(() => card.count()).toBe(1);
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "console-webhooks");

      // Edited: one more event type.
      await card.getByRole("button", { name: "Edit" }).click();
      await card.getByRole("checkbox", { name: "subject.imported" }).check();
      await card.getByRole("button", { name: "Save the endpoint" }).click();
      await poll(() => card.textContent()).toContain("Events: subject.imported, webhook.test");
      const read = await api.get(`${tenant.env}/webhooks/${endpoint.id}`, { token: tenant.token });
      expect(read.body.event_types).toEqual(["subject.imported", "webhook.test"]);

      // A test event: refused by the receiver, it fails and waits a minute.
      await card.getByRole("button", { name: "Send a test event" }).click();
      await poll(async () => (await statusText(page)).join(" ")).toContain(
        `A test event was sent to ${endpoint.url}`,
      );
      const deliveryId = await vi.waitFor(async () => {
        const listedDeliveries = await api.get(`${tenant.env}/webhook-deliveries`, { token: tenant.token });
        expect(listedDeliveries.body.items).toHaveLength(1);
        return listedDeliveries.body.items[0].id as string;
      });
      await waitForDelivery(api, tenant, deliveryId, (d) => expect(d.status).toBe("failed"));

      // The deliveries, filtered by event type, and one's attempts.
      const deliveries = page.getByRole("region", { name: "Webhook deliveries in Production" });
      await deliveries.getByLabel("Event type").selectOption("subject.imported");
      await poll(() =>
        deliveries.getByText("No delivery of subject.imported.", { exact: false }).count(),
      ).toBe(1);
      await deliveries.getByLabel("Event type").selectOption("webhook.test");
      const row = deliveries.locator(`tr[data-delivery="${deliveryId}"]`);
      await poll(() => row.locator(".delivery-status").textContent()).toBe("failed");
      await row.getByRole("button", { name: /^Attempts/ }).click();
      const detail = deliveries.getByRole("region", { name: "Delivery detail" });
      const attempts = detail.getByRole("table", { name: "Attempts" });
      await poll(() => attempts.getByRole("row").count()).toBe(2);
      expect(await attempts.getByRole("row").nth(1).getByRole("cell").nth(1).textContent()).toBe("500");
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "console-delivery");

      // Rotated: a new secret, shown once.
      await card.getByRole("button", { name: "Rotate the secret" }).click();
      await poll(async () => (await secret.inputValue()) !== first).toBe(true);
      expect(await secret.inputValue()).toMatch(/^whsec_/);

      // Recovered: counted first, then sent again, to a receiver that now accepts it.
      receiver.respond(() => ({ status: 204 }));
      await card.getByRole("button", { name: "Count what would be recovered" }).click();
      await poll(() =>
        card.getByText("1 failed or dead-lettered deliveries would be sent again.").count(),
      ).toBe(1);
      expect(
        (await api.get(`${tenant.env}/webhook-deliveries/${deliveryId}`, { token: tenant.token })).body
          .status,
      ).toBe("failed");
      await card.getByRole("button", { name: "Recover 1 deliveries" }).click();
      await poll(() => card.getByText("1 deliveries are pending again.").count()).toBe(1);
      await waitForDelivery(api, tenant, deliveryId, (d) => expect(d.status).toBe("succeeded"));
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await receiver.close();
    }
  });
});

describe("evaluations in the console", () => {
  it("filters the list, shows an evaluation's metrics, and rescores it", async () => {
    const tenant = await createTenant(api);
    const setup = await interviewSetup(api, tenant);
    const evaluation = await scoredInterview(setup);
    const otherSubject = await createSubject(api, tenant);

    const { page, problems } = await consoleOf(tenant);
    const evaluations = page.getByRole("region", { name: "Evaluations in Production" });
    await poll(() => evaluations.getByRole("button", { name: evaluation.id }).count()).toBe(1);
    await evaluations.getByLabel("Subject id").fill(otherSubject);
    await poll(() =>
      evaluations.getByText("No evaluation matches these filters.", { exact: false }).count(),
    ).toBe(1);
    await evaluations.getByLabel("Subject id").fill(setup.subjectId);
    await poll(() => evaluations.getByRole("button", { name: evaluation.id }).count()).toBe(1);
    // Created since tomorrow: none.
    const tomorrow = new Date(Date.now() + 36 * 60 * 60 * 1000);
    const day = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, "0")}-${String(tomorrow.getDate()).padStart(2, "0")}`;
    await evaluations.getByLabel("Created since").fill(day);
    await poll(() =>
      evaluations.getByText("No evaluation matches these filters.", { exact: false }).count(),
    ).toBe(1);
    await evaluations.getByLabel("Created since").fill("");
    await poll(() => evaluations.getByRole("button", { name: evaluation.id }).count()).toBe(1);
    await expectAccessible(page);

    await evaluations.getByRole("button", { name: evaluation.id }).click();
    const metrics = page.getByRole("region", { name: "Metrics" });
    await poll(() => metrics.getByRole("row", { name: /^Corrections/ }).count()).toBe(1);
    await poll(() => metrics.getByRole("row", { name: /^Attempts/ }).count()).toBe(1);
    const result = page.getByRole("region", { name: "Result" });
    await poll(() => result.getByRole("form", { name: "Rescore the evaluation" }).count()).toBe(1);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-rescore");

    await result.getByRole("button", { name: "Rescore" }).click();
    await poll(async () => (await statusText(page)).join(" ")).toContain("Rescored");
    const path = `${tenant.env}/evaluations/${evaluation.id}`;
    const results = await api.get(`${path}/results`, { token: tenant.token });
    expect(results.body.items).toHaveLength(2);
    // The page shows the new result: its scoring time.
    const latest = results.body.items[1] as { scored_at: string };
    const shown = await page.evaluate<string>(
      `new Date(${JSON.stringify(latest.scored_at)}).toLocaleString()`,
    );
    await poll(() => result.textContent()).toContain(`scored ${shown}`);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("subjects in the console", () => {
  it("finds a subject by external id, exports it as a download, and erases it once its id is typed", async () => {
    const tenant = await createTenant(api);
    const externalId = `emp-console-${Date.now()}`;
    const subjectId = await createSubject(api, tenant, externalId);

    const { page, problems } = await consoleOf(tenant);
    await openSection(page, "Subjects");
    const subjects = page.getByRole("region", { name: "Subjects in Production" });
    await subjects.getByLabel("External id").fill("nobody-here");
    await subjects.getByRole("button", { name: "Find the subject" }).click();
    await poll(() =>
      subjects.getByText("No subject has the external id “nobody-here”", { exact: false }).count(),
    ).toBe(1);
    await subjects.getByLabel("External id").fill(externalId);
    await subjects.getByRole("button", { name: "Find the subject" }).click();
    const card = subjects.getByRole("article", { name: `Subject ${externalId}` });
    await poll(() => card.textContent()).toContain(subjectId);
    await expectAccessible(page);

    // The export: one JSON document, downloaded.
    const downloaded = page.waitForEvent("download");
    await card.getByRole("button", { name: "Export the subject's data" }).click();
    const download = await downloaded;
    expect(download.suggestedFilename()).toBe(`subject-${subjectId}.json`);
    const stream = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk));
    const exported = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    expect(JSON.stringify(exported)).toContain(subjectId);

    // The erasure: refused until the external id is typed exactly.
    await card.getByRole("button", { name: "Erase the subject" }).click();
    const confirm = card.getByRole("form", { name: "Confirm the erasure" });
    const erase = confirm.getByRole("button", { name: "Erase for good" });
    await confirm.getByLabel(/Type the external id/).fill("emp-console");
    expect(await erase.isDisabled()).toBe(true);
    await expectAccessible(page);
    await confirm.getByLabel(/Type the external id/).fill(externalId);
    await erase.click();
    await poll(() => card.textContent(), { timeout: 30_000 }).toContain("Erased: every plane");
    await screenshotAtBothWidths(page, "console-subjects");
    expect((await api.get(`${tenant.env}/subjects/${subjectId}`, { token: tenant.token })).status).toBe(404);

    // Erased subjects are not found again.
    await subjects.getByRole("button", { name: "Find the subject" }).click();
    await poll(() =>
      subjects.getByText(`No subject has the external id “${externalId}”`, { exact: false }).count(),
    ).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("analytics in the console", () => {
  it("says the privacy floor applies below five interviews, then charts completion and each axis's bands", async () => {
    const tenant = await createTenant(api);
    const setup = await interviewSetup(api, tenant);
    await scoredInterview(setup);

    const { page, problems } = await consoleOf(tenant);
    await openSection(page, "Analytics");
    const analytics = page.getByRole("region", { name: "Analytics of Production" });
    await poll(() => analytics.getByRole("note").textContent()).toContain("Privacy floor");
    await poll(() => analytics.locator("canvas").count()).toBe(1);
    expect(await analytics.getByRole("img", { name: /started and completed by day/ }).count()).toBe(1);
    await expectAccessible(page);

    for (let more = 0; more < 4; more++) await scoredInterview(setup);
    await openSection(page, "Quotas");
    await openSection(page, "Analytics");
    await poll(() => analytics.textContent()).toContain("5 interviews started, 5 completed (100%)");
    expect(await analytics.getByRole("note").count()).toBe(0);
    // The sample scorecard's axes, each charted by band, with the numbers in a table too.
    await poll(() => analytics.locator("canvas").count()).toBeGreaterThan(1);
    const bands = analytics.getByRole("table", { name: /scored/ });
    await poll(() => bands.count()).toBeGreaterThan(0);
    const counts = (await bands.first().getByRole("cell").allTextContents()).map(Number);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-analytics");
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("the organization in the console", () => {
  it("shows each environment's quotas and the audit trail, filtered, at desktop and phone width", async () => {
    const tenant = await createTenant(api);
    await createKey(api, tenant, ["evaluations:read"], "audited");

    const { page, problems } = await consoleOf(tenant, PHONE);
    await openSection(page, "Quotas");
    const quotas = page.getByRole("region", { name: "Quotas of Production" });
    const evaluationsRow = quotas.locator('tr[data-counter="evaluations"]');
    await poll(() => evaluationsRow.count()).toBe(1);
    const read = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
    expect(await evaluationsRow.getByRole("cell").nth(1).textContent()).toBe(
      String(read.body.limits.evaluations),
    );
    expect(await quotas.getByRole("meter").count()).toBe(5);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-quotas");

    await page.getByRole("button", { name: "Audit trail" }).click();
    const audit = page.getByRole("region", { name: "Audit trail" });
    await poll(() => audit.getByRole("row").count()).toBeGreaterThan(1);
    const rows = await audit.getByRole("row").allTextContents();
    expect(rows.some((row) => row.includes("api_key"))).toBe(true);
    await audit.getByLabel("Action").fill("no.such_action");
    await poll(() => audit.getByText("No audit event matches", { exact: false }).count()).toBe(1);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-audit");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(
      PHONE.width,
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("switches between the organizations of a person in several, each with its own apps", async () => {
    const tenant = await createTenant(api);
    const second = await api.post(
      "/v1/organizations",
      { name: "Second Works" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(second.status, JSON.stringify(second.body)).toBe(201);

    const { page, problems } = await consoleOf(tenant);
    const switcher = page.getByLabel("Organization", { exact: true });
    await poll(() => switcher.count()).toBe(1);
    expect(await switcher.inputValue()).toBe(tenant.organizationId);
    await expectAccessible(page);
    await switcher.selectOption(second.body.id);
    await poll(() => page.getByText("This organization has no app yet", { exact: false }).count()).toBe(1);
    const active = await api.get("/v1/session/active-organization", { token: tenant.token });
    // The console's session is its own: the tenant's token still acts in the first organization.
    expect(active.body.organization_id).toBe(tenant.organizationId);
    await page.reload();
    await poll(() => page.getByText("This organization has no app yet", { exact: false }).count()).toBe(1);
    await page.getByLabel("Organization", { exact: true }).selectOption(tenant.organizationId);
    await poll(() => page.getByRole("heading", { name: /Production/ }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("the hosted interview page with an agent", () => {
  it("shows the agent's presence and its turns as they come, paused while it is away", async () => {
    const tenant = await createTenant(api);
    const setup = await interviewSetup(api, tenant);
    const { session, agentSession, agent } = await agentInterview(api, setup);
    const started_at = new Date().toISOString();
    const spoken = await agent.command({
      type: "utterance",
      id: "u1",
      speaker: "agent",
      modality: "voice",
      text: "Hello, I will lead this interview.",
      started_at,
    });
    expect(spoken.status, JSON.stringify(spoken.body)).toBe(200);

    const { page, problems } = await openPage(browser, PHONE);
    await page.goto(onStack(stack.url, session.url));
    const interviewer = page.getByRole("region", { name: "Your interviewer" });
    // A turn said before the page opened comes from the transcript; no agent is connected yet.
    await poll(() => interviewer.getByRole("log").textContent()).toContain(
      "Hello, I will lead this interview.",
    );
    expect(await interviewer.textContent()).toContain("not connected right now");

    const socket = await openSocket(agentSession.server_url, agentSession.agent_token);
    try {
      await poll(() => interviewer.textContent()).toContain("Your interviewer is connected.");
      const next = await agent.command({
        type: "utterance",
        id: "u2",
        speaker: "agent",
        modality: "voice",
        text: "How many years of experience do you have?",
        started_at: new Date().toISOString(),
      });
      expect(next.status, JSON.stringify(next.body)).toBe(200);
      // Pushed over the participant's realtime door: no reload.
      await poll(() => interviewer.getByRole("listitem").allTextContents()).toEqual([
        "Interviewer: Hello, I will lead this interview.",
        "Interviewer: How many years of experience do you have?",
      ]);
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "interview-agent");
    } finally {
      await socket.close();
    }
    // The agent gone for longer than the pause delay: the page says the interview is paused.
    await poll(() => page.getByRole("heading", { name: "Interview paused" }).count()).toBe(1);
    expect(await page.getByRole("main").textContent()).toContain("goes on by itself");
    await expectAccessible(page);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
