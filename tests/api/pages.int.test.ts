import { setTimeout as sleep } from "node:timers/promises";
import { sampleContents, startReceiver } from "@evalp/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  DESKTOP,
  expectAccessible,
  launchBrowser,
  onStack,
  openPage,
  PHONE,
  poll,
  screenshot,
  screenshotAtBothWidths,
  seriousViolations,
  tabTo,
} from "./support/browser.js";
import type { ApiClient } from "./support/client.js";
import { logInToConsole } from "./support/console.js";
import { createTenant, ik, signUp, type Tenant } from "./support/fixtures.js";
import {
  consentedInterview,
  createEvaluation,
  createSession,
  createSubject,
  interviewSetup,
} from "./support/interview.js";
import { type SentMail, sentMail } from "./support/mail.js";
import { createBundle, moveBundle } from "./support/platform.js";
import { deleteKeys } from "./support/redis.js";
import { type Stack, useStack } from "./support/stack.js";
import { createEndpoint, waitForDelivery } from "./support/webhooks.js";

// The pages people open (docs/pages.md), driven in the machine's Chromium as a person would:
// by the labels and roles they see, by mouse and by keyboard alone, at desktop and phone width.
// Webhooks may reach the test's receiver on 127.0.0.1; a failed delivery waits a minute before
// its next attempt, long enough for the console to show it failed and replay it.
const context = useStack({ WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_RETRY_SCHEDULE_MS: "60000" });
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

const mailTo = (email: string) => sentMail(stack.config.MAIL_DIR).filter((mail) => mail.to === email);

/** The link of a mail, opened on this stack's gateway. */
function linkIn(mail: SentMail | undefined): string {
  const link = mail && /https?:\/\/\S+\?token=[0-9A-Za-z]+/.exec(mail.text)?.[0];
  if (!link) throw new Error(`no link in mail ${mail?.subject}`);
  return onStack(stack.url, link);
}

const login = (email: string, password: string) => api.post("/auth/login", { email, password });

async function invite(tenant: Tenant, email: string) {
  const invited = await api.post(
    `${tenant.org}/memberships`,
    { email, role: "member" },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(invited.status, invited.text).toBe(201);
  await vi.waitFor(() => expect(mailTo(email)).toHaveLength(1));
  return linkIn(mailTo(email)[0]);
}

describe("the accessibility check", () => {
  it("finds a serious violation where there is one: a field without a label", async () => {
    const { page } = await openPage(browser);
    await page.setContent('<html lang="en"><title>t</title><main><input type="text"></main></html>');
    expect(await seriousViolations(page)).toEqual([expect.stringMatching(/^label \(critical/)]);
    await page.context().close();
  });
});

describe("the invitation page", () => {
  it("lets a new member set a password from the mail's link, log in to the console, and see the organization", async () => {
    const organizationName = `Invited Works ${ik().slice(0, 8)}`;
    const tenant = await createTenant(api, organizationName);
    const email = `new-${ik().slice(0, 8)}@example.com`;
    const link = await invite(tenant, email);
    expect(new URL(link).pathname).toBe("/accept-invitation");

    const { page, problems } = await openPage(browser);
    const response = await page.goto(link);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(response?.headers()["referrer-policy"]).toBe("no-referrer");
    await poll(() => page.getByRole("heading", { name: "Accept your invitation" }).count()).toBe(1);
    // The password field has focus as the page opens.
    expect(await page.locator(":focus").getAttribute("type")).toBe("password");
    await expectAccessible(page);
    await screenshot(page, "accept-invitation-desktop");

    // Too short: refused in words, nothing accepted.
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Join the organization" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("8 to 256 characters");

    await page.getByLabel("Password").fill("a password of my own");
    await page.getByRole("button", { name: "Join the organization" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("You have joined");

    // The new member logs in to the console and finds the inviting organization and its app.
    await logInToConsole(page, stack.url, { email, password: "a password of my own" });
    await poll(() => page.getByText(`Organization ${organizationName}`, { exact: true }).count()).toBe(1);
    expect(await page.getByRole("heading", { name: "Survey" }).count()).toBe(1);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-new-member");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("asks someone with an account for that account's password, and says when it is not", async () => {
    const tenant = await createTenant(api);
    const existing = await signUp(api, "Elsewhere");
    const link = await invite(tenant, existing.email);
    const { page } = await openPage(browser, PHONE);
    await page.goto(link);
    await page.getByLabel("Password").fill("not the account's password");
    await page.getByRole("button", { name: "Join the organization" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("this is not its password");
    await expectAccessible(page);
    await screenshot(page, "accept-invitation-phone");
    await page.getByLabel("Password").fill(existing.password);
    await page.getByRole("button", { name: "Join the organization" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("You have joined");

    // Used once: the same link now says so.
    await page.goto(link);
    await page.getByLabel("Password").fill(existing.password);
    await page.getByRole("button", { name: "Join the organization" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("already been used");
    await page.context().close();
  });
});

describe("the password reset page", () => {
  it("sets a new password from the mail's link that then logs in; the used link says so", async () => {
    const user = await signUp(api);
    expect((await api.post("/auth/password-reset/request", { email: user.email })).status).toBe(202);
    await vi.waitFor(() => expect(mailTo(user.email)).toHaveLength(1));
    const link = linkIn(mailTo(user.email)[0]);
    expect(new URL(link).pathname).toBe("/reset-password");

    for (const [viewport, name] of [
      [DESKTOP, "desktop"],
      [PHONE, "phone"],
    ] as const) {
      const { page } = await openPage(browser, viewport);
      await page.goto(link);
      await poll(() => page.getByRole("heading", { name: "Choose a new password" }).count()).toBe(1);
      await expectAccessible(page);
      await screenshot(page, `reset-password-${name}`);
      await page.context().close();
    }

    const { page, problems } = await openPage(browser);
    await page.goto(link);
    await page.getByLabel("New password").fill("a brand new password");
    await page.getByRole("button", { name: "Set the new password" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("Your password is set");
    expect((await login(user.email, "a brand new password")).status).toBe(200);
    expect((await login(user.email, user.password)).status).toBe(401);

    await page.goto(link);
    await page.getByLabel("New password").fill("yet another password");
    await page.getByRole("button", { name: "Set the new password" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("expired or has already been used");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("says a link without its token is incomplete, and an unknown one is not valid", async () => {
    const { page } = await openPage(browser);
    await page.goto(`${stack.url}/reset-password`);
    await poll(() => page.getByRole("heading", { name: "Link incomplete" }).count()).toBe(1);
    await page.goto(`${stack.url}/reset-password?token=unknownToken123`);
    await page.getByLabel("New password").fill("a brand new password");
    await page.getByRole("button", { name: "Set the new password" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("not valid");
    await page.context().close();
  });
});

/**
 * The sample bundle (number, single_select, scale) and a second section with the two other input
 * kinds, so that the page shows all five.
 */
function everyInputKind() {
  const contents = sampleContents();
  const experience = contents.experience as { sections: unknown[] };
  experience.sections.push({
    id: "s2",
    title: "Your work",
    description: "Two questions about how you work.",
    questions: [
      {
        id: "q4",
        prompt: "Which tools do you use?",
        input: "multi_select",
        options: [
          { id: "sql", label: "SQL" },
          { id: "python", label: "Python" },
          { id: "sheets", label: "Spreadsheets" },
        ],
        required: true,
      },
      { id: "q5", prompt: "Describe a project you are proud of", input: "text", required: true },
    ],
  });
  return contents;
}

async function hostedInterview(tenant: Tenant, bundleId: string) {
  const subjectId = await createSubject(api, tenant);
  const evaluation = await createEvaluation(api, { tenant, subjectId, bundleId });
  const session = (await createSession(api, tenant, evaluation.id)) as {
    url: string;
    participant_token: string;
  };
  expect(new URL(session.url).hash).toBe(`#${session.participant_token}`);
  return { evaluation, link: onStack(stack.url, session.url) };
}

async function evaluationStatus(tenant: Tenant, evaluationId: string) {
  const read = await api.get(`${tenant.env}/evaluations/${evaluationId}`, { token: tenant.token });
  return read.body.status as string;
}

/** The question the page shows now (its legend or label). */
async function expectQuestion(page: Page, prompt: string) {
  try {
    await poll(() => page.getByText(prompt, { exact: true }).count()).toBe(1);
  } catch (failure) {
    // What the page shows instead, and where focus is: a failure says which step went wrong.
    const shown = await page.evaluate(
      "({ text: document.querySelector('main')?.innerText, focused: document.activeElement?.outerHTML.slice(0, 300) })",
    );
    throw new Error(`no question "${prompt}"; the page: ${JSON.stringify(shown)}`, { cause: failure });
  }
}

describe("the hosted interview page", () => {
  let tenant: Tenant;
  let bundleId: string;
  beforeAll(async () => {
    tenant = await createTenant(api);
    const { bundle } = await createBundle(api, tenant, everyInputKind());
    for (const status of ["validated", "published"]) {
      expect((await moveBundle(api, tenant, bundle.id, status)).status).toBe(200);
    }
    bundleId = bundle.id;
  });

  it("takes a participant through every input kind, resumes after a reload, corrects, and finishes", async () => {
    const { evaluation, link } = await hostedInterview(tenant, bundleId);
    const { page, problems } = await openPage(browser);
    await page.goto(link);
    await poll(() => page.getByRole("heading", { name: "Before you start" }).count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, "interview-consent-desktop");
    await page.getByRole("button", { name: "I agree, start the interview" }).click();

    await expectQuestion(page, "How many years of experience do you have?");
    await expectAccessible(page);
    await screenshot(page, "interview-question-desktop");
    await page.getByLabel("How many years of experience do you have?").fill("4");
    await page.getByRole("button", { name: "Next" }).click();

    await expectQuestion(page, "Which team would you like to join?");
    const team = page.getByRole("group", { name: "Which team would you like to join?" });
    await team.getByRole("radio", { name: "Alpha" }).check();
    await page.getByRole("button", { name: "Next" }).click();
    await expectQuestion(page, "Rate your SQL");

    // A reload midway: the interview carries on at the question it had reached.
    await page.reload();
    await expectQuestion(page, "Rate your SQL");
    expect(await page.getByRole("progressbar", { name: "Progress" }).count()).toBe(1);

    // Back to the previous question, the answer kept; answering it again is a correction.
    await page.getByRole("button", { name: "Previous question" }).click();
    await expectQuestion(page, "Which team would you like to join?");
    expect(await team.getByRole("radio", { name: "Alpha" }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Save the answer" }).click();
    await expectQuestion(page, "Rate your SQL");

    await page.getByRole("group", { name: "Rate your SQL" }).getByRole("radio", { name: /^4/ }).check();
    await page.getByRole("button", { name: "Next" }).click();

    // The second section: its title, then a multi_select and a text question.
    await expectQuestion(page, "Which tools do you use?");
    await poll(() => page.getByRole("heading", { name: /Your work/ }).count()).toBe(1);
    // Nothing chosen: refused on the page, in words.
    await page.getByRole("button", { name: "Next" }).click();
    await poll(() => page.getByRole("alert").filter({ hasText: "Choose at least one option" }).count()).toBe(
      1,
    );
    const tools = page.getByRole("group", { name: "Which tools do you use?" });
    await tools.getByRole("checkbox", { name: "SQL" }).check();
    await tools.getByRole("checkbox", { name: "Python" }).check();
    await expectAccessible(page);
    await page.getByRole("button", { name: "Next" }).click();

    await expectQuestion(page, "Describe a project you are proud of");
    await page
      .getByLabel("Describe a project you are proud of")
      .fill("A reporting pipeline for the sales team.");
    await page.getByRole("button", { name: "Next" }).click();

    await poll(() => page.getByRole("button", { name: "Finish the interview" }).count()).toBe(1);
    await expectAccessible(page);
    await page.getByRole("button", { name: "Finish the interview" }).click();
    await poll(() => page.getByRole("heading", { name: "Thank you" }).count()).toBe(1);
    await screenshot(page, "interview-done-desktop");
    expect(problems).toEqual([]);
    await page.context().close();

    expect(await evaluationStatus(tenant, evaluation.id)).toBe("completed");
    const record = await api.get(`${tenant.env}/evaluations/${evaluation.id}/interview`, {
      token: tenant.token,
    });
    expect(record.body.metrics.corrections).toBeGreaterThanOrEqual(1);
  });

  it("says in words that a superseded link no longer works", async () => {
    const { evaluation, link } = await hostedInterview(tenant, bundleId);
    await createSession(api, tenant, evaluation.id);
    const { page } = await openPage(browser, PHONE);
    await page.goto(link);
    await poll(() => page.getByRole("alert").textContent()).toContain(
      "A newer link to this interview was sent",
    );
    await expectAccessible(page);
    await page.context().close();
  });

  it("is completed at phone width by keyboard alone", async () => {
    const { evaluation, link } = await hostedInterview(tenant, bundleId);
    const { page, problems } = await openPage(browser, PHONE);
    await page.goto(link);
    await poll(() => page.getByRole("heading", { name: "Before you start" }).count()).toBe(1);
    await screenshot(page, "interview-consent-phone");
    // Focus is on the consent button as soon as the page shows it: a key pressed at once counts.
    expect(await page.locator("button:focus").textContent()).toBe("I agree, start the interview");
    await page.keyboard.press("Enter");

    // Each new question has focus on its first control.
    await expectQuestion(page, "How many years of experience do you have?");
    await page.keyboard.type("7");
    await page.keyboard.press("Enter");

    await expectQuestion(page, "Which team would you like to join?");
    await expectAccessible(page);
    await screenshot(page, "interview-question-phone");
    await page.keyboard.press("Space");
    await tabTo(page, /^Next$/);
    await page.keyboard.press("Enter");

    await expectQuestion(page, "Rate your SQL");
    // Arrow keys move through a radio group and choose as they go: 1 → 3.
    await page.keyboard.press("Space");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    await tabTo(page, /^Next$/);
    await page.keyboard.press("Enter");

    await expectQuestion(page, "Which tools do you use?");
    await page.keyboard.press("Space");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Space");
    await tabTo(page, /^Next$/);
    await page.keyboard.press("Enter");

    await expectQuestion(page, "Describe a project you are proud of");
    await page.keyboard.type("Moved our team's reports from spreadsheets to SQL.");
    await tabTo(page, /^Next$/);
    await page.keyboard.press("Enter");

    await poll(() => page.getByRole("button", { name: "Finish the interview" }).count()).toBe(1);
    await screenshot(page, "interview-finish-phone");
    await tabTo(page, /^Finish the interview$/);
    await page.keyboard.press("Enter");
    await poll(() => page.getByRole("heading", { name: "Thank you" }).count()).toBe(1);
    // Nothing wider than the phone's screen (the screenshot checks it).
    await screenshot(page, "interview-done-phone");
    expect(problems).toEqual([]);
    await page.context().close();

    expect(await evaluationStatus(tenant, evaluation.id)).toBe("completed");
    // What was answered, as the transcript has it (docs/interview.md#the-transcript).
    const token = decodeURIComponent(new URL(link).hash.slice(1));
    const transcript = await api.get("/v1/participant/interview/transcript", { token });
    const said = transcript.body.items
      .filter((item: { speaker: string }) => item.speaker === "participant")
      .map((item: { text: string }) => item.text);
    expect(said).toEqual([
      "7",
      "Alpha",
      "3",
      "SQL, Spreadsheets",
      "Moved our team's reports from spreadsheets to SQL.",
    ]);
  });

  it("takes an answer at once when the realtime push outruns the consent's answer", async () => {
    const { link } = await hostedInterview(tenant, bundleId);
    const { page, problems } = await openPage(browser);
    // The socket pushes each revision; the consent's HTTP answer is held half a second here, so
    // the push of the consented interview (with its first question) surely comes first.
    let pushed = false;
    page.on("websocket", (socket) =>
      socket.on("framereceived", (frame) => {
        if (String(frame.payload).includes('"consented":true')) pushed = true;
      }),
    );
    let pushedFirst = false;
    await page.route("**/v1/participant/interview/consent", async (route) => {
      const response = await route.fetch();
      await sleep(500);
      pushedFirst = pushed;
      await route.fulfill({ response });
    });
    await page.goto(link);
    await poll(() => page.getByRole("heading", { name: "Before you start" }).count()).toBe(1);
    await page.keyboard.press("Enter");

    // The question shows with its Next button usable: an answer given at once is taken.
    await expectQuestion(page, "How many years of experience do you have?");
    await page.keyboard.type("5");
    await page.keyboard.press("Enter");
    await expectQuestion(page, "Which team would you like to join?");
    expect(pushedFirst).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("the console", () => {
  it("logs an operator in, lists the apps and environments, and creates an API key shown once", async () => {
    const tenant = await createTenant(api);
    for (const [viewport, name] of [
      [DESKTOP, "desktop"],
      [PHONE, "phone"],
    ] as const) {
      const { page } = await openPage(browser, viewport);
      await page.goto(`${stack.url}/console`);
      await poll(() => page.getByRole("heading", { name: "Log in to the console" }).count()).toBe(1);
      await expectAccessible(page);
      await screenshot(page, `console-login-${name}`);
      await page.context().close();
    }

    const { page, problems } = await openPage(browser);
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.url });
    await page.goto(`${stack.url}/console`);
    await page.getByLabel("Email").fill(tenant.email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Log in" }).click();
    await poll(() => page.getByRole("status").textContent()).toContain("The email or the password is wrong");
    await page.getByLabel("Password").fill(tenant.password);
    await page.getByRole("button", { name: "Log in" }).click();

    await poll(() => page.getByRole("heading", { name: "Survey" }).count()).toBe(1);
    await poll(() => page.getByRole("heading", { name: /Production/ }).count()).toBe(1);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-organization");
    await page
      .getByRole("navigation", { name: "Sections of Production" })
      .getByRole("button", { name: "API keys" })
      .click();
    const form = page.getByRole("form", { name: "Create an API key in Production" });
    await form.getByLabel("Key name").fill("backend");
    await form.getByRole("checkbox", { name: "evaluations:read" }).check();
    await form.getByRole("button", { name: "Create API key" }).click();
    const secret = page.getByLabel("Secret");
    await poll(() => secret.count()).toBe(1);
    const key = await secret.inputValue();
    expect(key).toMatch(/^evk_/);
    await expectAccessible(page);
    await screenshotAtBothWidths(page, "console-key");
    await page.getByRole("button", { name: "Copy the secret" }).click();
    await poll(() => page.getByText("Copied to the clipboard.").count()).toBe(1);
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(key);

    // The key works, with the scope chosen and no other.
    expect((await api.get(`${tenant.env}/evaluations`, { apiKey: key })).status).toBe(200);
    expect((await api.get(`${tenant.env}/subjects`, { apiKey: key })).status).toBe(403);

    // A reload keeps the session (its cookie); logging out ends it.
    await page.reload();
    await poll(() => page.getByRole("heading", { name: "Survey" }).count()).toBe(1);
    await page.getByRole("button", { name: "Log out" }).click();
    await poll(() => page.getByRole("heading", { name: "Log in to the console" }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows an evaluation's transcript and result, and replays a failed webhook delivery", async () => {
    const tenant = await createTenant(api);
    const setup = await interviewSetup(api, tenant);
    const { evaluation, participant } = await consentedInterview(api, setup);
    for (const [question, answer] of [
      ["q1", { value: 4 }],
      ["q2", { option_id: "a" }],
      ["q3", { value: 4 }],
    ] as const) {
      expect((await participant.answer(question, answer)).status).toBe(200);
    }
    expect((await participant.finish()).status).toBe(200);
    const evaluationPath = `${tenant.env}/evaluations/${evaluation.id}`;
    const result = await vi.waitFor(
      async () => {
        const got = await api.get(`${evaluationPath}/result`, { token: tenant.token });
        expect(got.status, JSON.stringify(got.body)).toBe(200);
        return got.body as {
          report: { axes: { label: string; score: number | null; band_label: string | null }[] };
        };
      },
      { timeout: 15_000, interval: 100 },
    );
    const interview = await api.get(`${evaluationPath}/interview?limit=200`, { token: tenant.token });
    const lines = (interview.body.entries as { payload: Record<string, unknown> }[])
      .filter((entry) => typeof entry.payload.text === "string")
      .map((entry) => `${entry.payload.speaker}: ${entry.payload.text}`);
    expect(lines.length).toBeGreaterThanOrEqual(6);

    // A receiver that refuses every delivery: the endpoint's test event fails and waits to retry.
    const receiver = await startReceiver();
    receiver.respond(() => ({ status: 500 }));
    try {
      const endpoint = await createEndpoint(api, tenant, {
        url: `${receiver.url}/refusing`,
        event_types: ["webhook.test"],
      });
      const tested = await api.post(`${tenant.env}/webhooks/${endpoint.id}/test`, undefined, {
        token: tenant.token,
        idempotencyKey: ik(),
      });
      expect(tested.status, JSON.stringify(tested.body)).toBe(200);
      const deliveryId = tested.body.id as string;
      await waitForDelivery(api, tenant, deliveryId, (d) => expect(d.status).toBe("failed"));
      // A newer evaluation whose participant has not started: listed first, nothing to show yet.
      const waiting = await createEvaluation(api, setup);

      const { page, problems } = await openPage(browser);
      await page.goto(`${stack.url}/console`);
      await page.getByLabel("Email").fill(tenant.email);
      await page.getByLabel("Password").fill(tenant.password);
      await page.getByRole("button", { name: "Log in" }).click();
      const evaluations = page.getByRole("region", { name: "Evaluations in Production" });
      await poll(() => evaluations.getByRole("button", { name: evaluation.id }).count()).toBe(1);
      await poll(async () =>
        (await evaluations.getByRole("row").allTextContents()).slice(1).map((r) => r.slice(0, 36)),
      ).toEqual([waiting.id, evaluation.id]);
      await poll(() => evaluations.getByRole("cell", { name: "completed" }).count()).toBe(1);
      await evaluations.getByRole("button", { name: waiting.id }).click();
      await poll(() => page.getByRole("region", { name: "Result" }).textContent()).toContain(
        "Not scored yet: the evaluation is pending.",
      );
      await poll(() => page.getByRole("region", { name: "Transcript" }).textContent()).toContain(
        "The participant has not started yet",
      );
      await expectAccessible(page);
      await page.getByRole("button", { name: "Back to the console" }).click();
      await evaluations.getByLabel("Evaluation status").selectOption("paused");
      await poll(() => evaluations.getByText("No paused evaluation.", { exact: false }).count()).toBe(1);
      await evaluations.getByLabel("Evaluation status").selectOption("completed");
      await poll(() => evaluations.getByRole("button", { name: evaluation.id }).count()).toBe(1);
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "console-evaluations");

      // One evaluation's page: every axis with its score and band, and the transcript's lines.
      await evaluations.getByRole("button", { name: evaluation.id }).click();
      await poll(() => page.getByRole("heading", { name: "Evaluation", exact: true }).count()).toBe(1);
      const resultCard = page.getByRole("region", { name: "Result" });
      for (const axis of result.report.axes) {
        const row = resultCard.getByRole("row", { name: new RegExp(`^${axis.label}`) });
        await poll(() => row.count()).toBe(1);
        expect(await row.getByRole("cell").allTextContents()).toEqual([
          String(axis.score ?? "no score"),
          axis.band_label ?? "no band",
        ]);
      }
      const transcript = page.getByRole("region", { name: "Transcript" });
      await poll(() => transcript.getByRole("listitem").count()).toBeGreaterThanOrEqual(lines.length);
      const shown = await transcript.getByRole("listitem").allTextContents();
      for (const line of lines) expect(shown).toContain(line);
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "console-evaluation");
      await page.getByRole("button", { name: "Back to the console" }).click();

      // The failed delivery, replayed from the console: the receiver now accepts it.
      await page
        .getByRole("navigation", { name: "Sections of Production" })
        .getByRole("button", { name: "Webhooks" })
        .click();
      const deliveries = page.getByRole("region", { name: "Webhook deliveries in Production" });
      await deliveries.getByLabel("Delivery status").selectOption("dead_letter");
      await poll(() => deliveries.getByText("No dead_letter delivery.", { exact: false }).count()).toBe(1);
      await deliveries.getByLabel("Delivery status").selectOption("failed");
      const row = deliveries.locator(`tr[data-delivery="${deliveryId}"]`);
      await poll(() => row.locator(".delivery-status").textContent()).toBe("failed");
      await expectAccessible(page);
      await screenshotAtBothWidths(page, "console-deliveries");
      receiver.respond(() => ({ status: 204 }));
      await row.getByRole("button", { name: /^Replay/ }).click();
      await poll(() => row.locator(".delivery-status").textContent()).toBe("pending");
      await poll(() => deliveries.getByRole("status").textContent()).toBe(
        `Delivery ${deliveryId} replayed: it is pending now.`,
      );
      await waitForDelivery(api, tenant, deliveryId, (d) => expect(d.status).toBe("succeeded"));
      await deliveries.getByLabel("Delivery status").selectOption("succeeded");
      await poll(() => row.locator(".delivery-status").textContent()).toBe("succeeded");
      expect(await row.locator("td").nth(2).textContent()).toBe("2");
      expect(problems).toEqual([]);
      await page.context().close();
    } finally {
      await receiver.close();
    }
  });
});
