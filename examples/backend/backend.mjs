#!/usr/bin/env node
// Usage:
//   EVALP_URL=http://127.0.0.1:8080 EVALP_API_KEY=evk_… \
//   EVALP_ENVIRONMENT=/v1/organizations/<org>/apps/<app>/environments/<env> EVALP_BUNDLE_ID=<bundle> \
//   node examples/backend/backend.mjs subjects.json
//   node examples/backend/backend.mjs --results        (EVALP_BUNDLE_ID not needed)
// What an integrator's backend does with the typed client: imports the people of subjects.json
// (`[{external_id, profile?}]`) as subjects, then starts an evaluation of the bundle for each and
// opens a participant session (whose token the participant's app takes). Prints one JSON line per
// subject. Every write carries an Idempotency-Key and 429/503 are retried by the client.
// With `--results`, it prints the verdict of every evaluation scored so far instead, one line each.
import { readFileSync } from "node:fs";
import { createClient, EvalpApiError, unwrap } from "@evalp/client";

const { EVALP_URL, EVALP_API_KEY, EVALP_ENVIRONMENT, EVALP_BUNDLE_ID } = process.env;
const file = process.argv[2];
const ids = /^\/v1\/organizations\/([^/]+)\/apps\/([^/]+)\/environments\/([^/]+)\/?$/.exec(
  EVALP_ENVIRONMENT ?? "",
);
const results = file === "--results";
if (!EVALP_URL || !EVALP_API_KEY || !ids || (!results && (!EVALP_BUNDLE_ID || !file))) {
  console.error(
    "usage: EVALP_URL=… EVALP_API_KEY=evk_… EVALP_ENVIRONMENT=/v1/organizations/<org>/apps/<app>/environments/<env> " +
      "EVALP_BUNDLE_ID=… node examples/backend/backend.mjs subjects.json | --results",
  );
  process.exit(2);
}
const env = { organization_id: ids[1], app_id: ids[2], environment_id: ids[3] };
const client = createClient({ baseUrl: EVALP_URL, apiKey: EVALP_API_KEY });
const BATCH = 100;
const EVALUATIONS =
  "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations";

/** The verdict of each scored evaluation (docs/results.md): its outcome and each axis's score and band. */
async function printResults() {
  for await (const evaluation of client.paginate(EVALUATIONS, {
    params: { path: env, query: { limit: 100 } },
  })) {
    if (evaluation.scored_at === null) continue;
    const result = await unwrap(
      client.GET(`${EVALUATIONS}/{evaluation_id}/result`, {
        params: { path: { ...env, evaluation_id: evaluation.id } },
      }),
    );
    const axes = Object.fromEntries(
      result.report.axes.map((axis) => [axis.axis, { score: axis.score, band: axis.band_id }]),
    );
    console.log(JSON.stringify({ evaluation_id: evaluation.id, outcome: result.outcome, axes }));
  }
}

try {
  if (results) {
    await printResults();
    process.exit(0);
  }
  const people = JSON.parse(readFileSync(file, "utf8"));
  for (let start = 0; start < people.length; start += BATCH) {
    const items = people.slice(start, start + BATCH).map((person) => ({
      external_id: person.external_id,
      identity_mode: "enterprise_managed",
      profile: person.profile ?? {},
    }));
    const batch = await unwrap(
      client.POST(
        "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects/batch",
        {
          params: { path: env },
          body: { items },
        },
      ),
    );
    for (const [index, receipt] of batch.receipts.entries()) {
      const external_id = items[index].external_id;
      if (receipt.error_code !== "") {
        console.log(JSON.stringify({ external_id, error: receipt.error_code }));
        continue;
      }
      const evaluation = await unwrap(
        client.POST(
          "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations",
          {
            params: { path: env },
            body: { subject_id: receipt.subject_id, bundle_id: EVALP_BUNDLE_ID },
          },
        ),
      );
      const session = await unwrap(
        client.POST(
          "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations/{evaluation_id}/participant-sessions",
          { params: { path: { ...env, evaluation_id: evaluation.id } }, body: {} },
        ),
      );
      console.log(
        JSON.stringify({
          external_id,
          subject_id: receipt.subject_id,
          evaluation_id: evaluation.id,
          status: evaluation.status,
          participant_token: session.participant_token,
          expires_at: session.expires_at,
        }),
      );
    }
  }
} catch (error) {
  if (!(error instanceof EvalpApiError)) throw error;
  // The code says what to do; the request id is what support asks for.
  console.error(`${error.status} ${error.code}: ${error.message} (request ${error.requestId})`);
  process.exit(1);
}
