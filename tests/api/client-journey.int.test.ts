import {
  createClient,
  EvalpApiError,
  type EvalpClient,
  type Fetch,
  type Schemas,
  unwrap,
  verifyWebhook,
} from "@evalp/client";
import { type Receiver, sampleContents } from "@evalp/testing";
import { afterAll, describe, expect, it, vi } from "vitest";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { useStack } from "./support/stack.js";

// The client's journey (docs/journey.md) through the typed client alone: what an
// integrator writes, from sign-up to a verified webhook of a completed interview.
const context = useStack();
let receiver: Receiver | undefined;
afterAll(() => receiver?.close());

/** A fetch that counts the requests a client sends, to see paging ask for several pages. */
function counting(): { fetch: Fetch; paths: string[] } {
  const paths: string[] = [];
  return {
    paths,
    fetch: (request) => {
      paths.push(new URL(request.url).pathname + new URL(request.url).search);
      return fetch(request);
    },
  };
}

/** The delivered request of the first event of a type, once it has arrived. */
async function delivered(type: string) {
  return vi.waitFor(
    () => {
      const found = receiver?.requests.find((request) => JSON.parse(request.body).type === type);
      expect(found, `a ${type} delivery`).toBeDefined();
      return found!;
    },
    { timeout: 15_000, interval: 50 },
  );
}

describe("the journey through the typed client", () => {
  it("signs up, sets up, imports, publishes, interviews, and verifies the webhooks it gets", async () => {
    const { stack, api } = context;
    const baseUrl = stack.url;
    receiver = await startCheckedReceiver(api);

    // 1. Sign up: no credential yet.
    const anonymous = createClient({ baseUrl });
    const signup = await unwrap(
      anonymous.POST("/auth/signup", {
        body: {
          email: "founder@client.example",
          password: "founder password",
          organization_name: "Client Co",
        },
      }),
    );
    const operator = createClient({ baseUrl, accessToken: signup.access_token });
    const organization_id = signup.organization_id;

    // 2. Set up: an app, an environment, a backend key (its secret shown once).
    const app = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id } },
        body: { slug: "hiring", name: "Hiring" },
      }),
    );
    const app_id = app.id;
    const environment = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps/{app_id}/environments", {
        params: { path: { organization_id, app_id } },
        body: { slug: "production", name: "Production" },
      }),
    );
    const envPath = { organization_id, app_id, environment_id: environment.id };
    const key = await unwrap(
      operator.POST(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys",
        {
          params: { path: envPath },
          body: {
            name: "backend",
            scopes: ["org:read", "subjects:write", "evaluations:write", "webhooks:write", "bundles:read"],
          },
        },
      ),
    );
    expect(key.secret).toMatch(/^evk_/);
    const backend = createClient({ baseUrl, apiKey: key.secret });

    // 3. A webhook endpoint on a real receiver, made with the backend key.
    const endpoint = await unwrap(
      backend.POST(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/webhooks",
        {
          params: { path: envPath },
          body: {
            url: `${receiver.url}/hooks`,
            event_types: ["subject.imported", "interview.completed", "evaluation.scored"],
          },
        },
      ),
    );
    expect(endpoint.secret).toMatch(/^whsec_/);

    // 4. Import subjects; a retry with the same Idempotency-Key replays the first answer.
    const batch = {
      items: ["cand-1", "cand-2", "cand-3"].map((external_id) => ({
        external_id,
        identity_mode: "anonymous" as const,
        profile: { source: "ats" },
      })),
    };
    const importPath =
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects/batch";
    const importKey = crypto.randomUUID();
    const imported = await unwrap(
      backend.POST(importPath, {
        params: { path: envPath, header: { "idempotency-key": importKey } },
        body: batch,
      }),
    );
    expect(imported.receipts.map((receipt) => receipt.error_code)).toEqual(["", "", ""]);
    const replayed = await backend.POST(importPath, {
      params: { path: envPath, header: { "idempotency-key": importKey } },
      body: batch,
    });
    expect(replayed.response.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.data?.batch_id).toBe(imported.batch_id);

    // 5. A template and a bundle (the operator's), validated and published.
    const template = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps/{app_id}/templates", {
        params: { path: { organization_id, app_id } },
        body: {
          name: "Graduate intake",
          definitions: Object.entries(sampleContents()).map(([kind, content]) => ({
            business_id: `intake.${kind}`,
            locale: "en",
            name: kind,
            // The sample's keys are its contents' kinds.
            content: { ...content, kind: kind as Schemas["TemplateDefinition"]["content"]["kind"] },
          })),
        },
      }),
    );
    const idOf = (kind: string) =>
      template.definitions.find((definition) => definition.content.kind === kind)!.id;
    const bundle = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps/{app_id}/bundles", {
        params: { path: { organization_id, app_id } },
        body: {
          name: "Intake",
          scorecard_version_id: idOf("scorecard"),
          experience_version_id: idOf("experience"),
          context_version_id: idOf("context"),
          guardrail_version_id: idOf("guardrail"),
          adaptive_policy_version_id: idOf("adaptive_policy"),
          report_template_version_id: idOf("report_template"),
        },
      }),
    );
    for (const status of ["validated", "published"] as const) {
      const moved = await unwrap(
        operator.POST("/v1/organizations/{organization_id}/apps/{app_id}/bundles/{bundle_id}/status", {
          params: { path: { organization_id, app_id, bundle_id: bundle.id } },
          body: { status },
        }),
      );
      expect(moved.status).toBe(status);
    }

    // 6. An evaluation of an imported subject (the backend's), and the participant's interview.
    const subject_id = imported.receipts[0]!.subject_id;
    const evaluation = await unwrap(
      backend.POST(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations",
        {
          params: { path: envPath },
          body: { subject_id, bundle_id: bundle.id },
        },
      ),
    );
    const session = await unwrap(
      backend.POST(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/participant-sessions",
        { params: { path: { ...envPath, evaluation_id: evaluation.id } }, body: {} },
      ),
    );
    const participant = createClient({ baseUrl, accessToken: session.participant_token });
    const started = await unwrap(participant.POST("/v1/participant/interview/start"));
    expect(started.interview.status).toBe("not_started");
    await unwrap(participant.POST("/v1/participant/interview/consent", { body: { consented: true } }));
    const answers = [
      { question_id: "q1", answer: { value: 4 } },
      { question_id: "q2", answer: { option_id: "a" } },
      { question_id: "q3", answer: { value: 5 } },
    ];
    for (const body of answers) await unwrap(participant.POST("/v1/participant/interview/answers", { body }));
    const finished = await unwrap(participant.POST("/v1/participant/interview/finish"));
    expect(finished.interview.status).toBe("completed");
    const view = await unwrap(
      backend.GET(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/interview",
        { params: { path: { ...envPath, evaluation_id: evaluation.id } } },
      ),
    );
    expect(view.status).toBe("completed");

    // 7. The webhooks delivered: each verifies with the endpoint's secret and reads as its event.
    const importedHook = await delivered("subject.imported");
    const importedEvent = await verifyWebhook(endpoint.secret, importedHook.headers, importedHook.body);
    expect(importedEvent.type === "subject.imported" && importedEvent.data.subject_ids).toEqual(
      imported.receipts.map((receipt) => receipt.subject_id),
    );
    const completedHook = await delivered("interview.completed");
    const completed = await verifyWebhook(endpoint.secret, completedHook.headers, completedHook.body);
    expect(completed).toMatchObject({ type: "interview.completed", environment_id: environment.id });
    expect(completed.type === "interview.completed" && completed.data.evaluation_id).toBe(evaluation.id);
    await expect(
      verifyWebhook(
        endpoint.secret,
        completedHook.headers,
        completedHook.body.replace("completed", "started"),
      ),
    ).rejects.toThrow();

    // 8. The verdict: scored in the background, announced by `evaluation.scored`, read typed.
    const scoredHook = await delivered("evaluation.scored");
    const scored = await verifyWebhook(endpoint.secret, scoredHook.headers, scoredHook.body);
    const report = scored.type === "evaluation.scored" ? scored.data.report : undefined;
    expect(report?.axes.map((axis) => [axis.axis, axis.score])).toEqual([
      ["experience", 40],
      ["skill", 5],
    ]);
    const resultPath =
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/result";
    const result = await unwrap(
      backend.GET(resultPath, { params: { path: { ...envPath, evaluation_id: evaluation.id } } }),
    );
    expect(result).toMatchObject({ evaluation_id: evaluation.id, outcome: "completed", report });
    const listed = [];
    for await (const item of backend.paginate(
      "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations",
      { params: { path: envPath, query: { status: "completed", limit: 1 } } },
    )) {
      listed.push(item);
    }
    expect(listed.map((item) => [item.id, item.scored_at])).toEqual([[evaluation.id, result.scored_at]]);
  });

  it("iterates a list across pages and catches a typed error with its code and request id", async () => {
    const { stack } = context;
    const signup = await unwrap(
      createClient({ baseUrl: stack.url }).POST("/auth/signup", {
        body: { email: "pager@client.example", password: "pager password", organization_name: "Pager Co" },
      }),
    );
    const sent = counting();
    const operator: EvalpClient = createClient({
      baseUrl: stack.url,
      accessToken: signup.access_token,
      fetch: sent.fetch,
    });
    const organization_id = signup.organization_id;
    const slugs = ["one", "two", "three", "four", "five"];
    for (const slug of slugs) {
      await unwrap(
        operator.POST("/v1/organizations/{organization_id}/apps", {
          params: { path: { organization_id } },
          body: { slug, name: slug },
        }),
      );
    }

    sent.paths.length = 0;
    const listed: string[] = [];
    for await (const app of operator.paginate("/v1/organizations/{organization_id}/apps", {
      params: { path: { organization_id }, query: { limit: 2 } },
    })) {
      listed.push(app.slug);
    }
    // Newest first, each once, over three pages.
    expect(listed).toEqual([...slugs].reverse());
    expect(sent.paths).toHaveLength(3);
    expect(sent.paths.slice(1).every((path) => path.includes("cursor="))).toBe(true);

    // A slug already taken: 409 already_exists, thrown with the request's id.
    const error = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id } },
        headers: { "x-request-id": "client-journey-duplicate" },
        body: { slug: "one", name: "again" },
      }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EvalpApiError);
    expect(error).toMatchObject({
      status: 409,
      code: "already_exists",
      requestId: "client-journey-duplicate",
    });

    // A request that fails validation reads the same way, its problems in `problems`.
    const invalid = await unwrap(
      operator.GET("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id }, query: { limit: 500 } },
      }),
    ).catch((caught: unknown) => caught as EvalpApiError);
    expect(invalid).toMatchObject({ status: 422, code: "validation_error" });
    expect((invalid as EvalpApiError).problems[0]).toMatchObject({
      loc: ["query", "limit"],
      type: "less_than_equal",
    });
    expect((invalid as EvalpApiError).requestId).toBeTruthy();
  });

  it("finds, exports and erases a subject, and reads the erasure's state, typed", async () => {
    const { stack } = context;
    const signup = await unwrap(
      createClient({ baseUrl: stack.url }).POST("/auth/signup", {
        body: { email: "privacy@client.example", password: "privacy password", organization_name: "Privacy" },
      }),
    );
    const operator = createClient({ baseUrl: stack.url, accessToken: signup.access_token });
    const organization_id = signup.organization_id;
    const app = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps", {
        params: { path: { organization_id } },
        body: { slug: "people", name: "People" },
      }),
    );
    const environment = await unwrap(
      operator.POST("/v1/organizations/{organization_id}/apps/{app_id}/environments", {
        params: { path: { organization_id, app_id: app.id } },
        body: { slug: "live", name: "Live" },
      }),
    );
    const env = { organization_id, app_id: app.id, environment_id: environment.id };
    const base = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects";
    await unwrap(
      operator.POST(`${base}/batch`, {
        params: { path: env },
        body: { items: [{ external_id: "p-1", identity_mode: "anonymous", profile: { team: "blue" } }] },
      }),
    );
    const found: Schemas["Subject"][] = [];
    for await (const subject of operator.paginate(base, {
      params: { path: env, query: { external_id: "p-1" } },
    })) {
      found.push(subject);
    }
    expect(found).toEqual([expect.objectContaining({ external_id: "p-1", profile: { team: "blue" } })]);
    const subject_id = found[0]?.id ?? "";
    const path = { ...env, subject_id };

    const exported: Schemas["SubjectExport"] = await unwrap(
      operator.GET(`${base}/{subject_id}/export`, { params: { path } }),
    );
    expect(exported.subject.profile).toEqual({ team: "blue" });

    const accepted: Schemas["SubjectErasureAccepted"] = await unwrap(
      operator.DELETE(`${base}/{subject_id}`, { params: { path } }),
    );
    expect(accepted).toMatchObject({ subject_id, erasure: { status: "pending" } });
    await vi.waitFor(
      async () => {
        const state = await unwrap(operator.GET(`${base}/{subject_id}/erasure`, { params: { path } }));
        expect(state.status).toBe("completed");
      },
      { timeout: 15_000, interval: 100 },
    );
    const gone = await unwrap(operator.GET(`${base}/{subject_id}`, { params: { path } })).catch(
      (caught: unknown) => caught,
    );
    expect(gone).toMatchObject({ status: 404, code: "subject_erased" });
  });
});
