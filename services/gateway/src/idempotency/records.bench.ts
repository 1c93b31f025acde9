import { randomUUID } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { test } from "vitest";
import { requestFingerprint } from "../admission/checks.js";
import { idempotencyId } from "../admission/round-trip.js";
import { compileRequestValidator } from "../validation/request-validator.js";
import { createSeal } from "./records.js";

/**
 * What the gateway does per idempotent POST, step by step, on the body of the bench's B1 (a
 * one-subject import) and its answer: the fingerprint, the key's Redis identity, validation, the
 * record's serialisation and its seal, and what a replay opens. Run: npx vitest bench --run
 * --project "unit (bench)" services/gateway (from the repository root).
 */

const path = `/v1/organizations/${randomUUID()}/apps/${randomUUID()}/environments/${randomUUID()}/subjects/batch`;
const body = {
  items: [{ external_id: `c-${randomUUID()}`, identity_mode: "anonymous", profile: {} }],
};
const answer = JSON.stringify({
  batch_id: randomUUID(),
  idempotent_replay: false,
  receipts: [{ item_index: 0, subject_id: randomUUID(), error_code: "" }],
});
const record = {
  fingerprint: requestFingerprint("POST", path, body),
  status: 200,
  body: answer,
  headers: {},
};
const seal = createSeal("s".repeat(40));
const sealed = seal.seal(JSON.stringify(record));
const validate = compileRequestValidator({
  body: Type.Object(
    {
      items: Type.Array(
        Type.Object(
          {
            external_id: Type.String({ minLength: 1, maxLength: 255 }),
            identity_mode: Type.Union([Type.Literal("anonymous"), Type.Literal("self_managed")]),
            profile: Type.Record(Type.String(), Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        { minItems: 1, maxItems: 100 },
      ),
    },
    { additionalProperties: false },
  ),
});

test("idempotent POST, per step", async ({ bench }) => {
  // The table shows each step against the cheapest, the key's identity.
  await bench.compare(
    bench("key identity (SHA-256), the baseline", () => {
      idempotencyId("org:x", "POST", "/v1/…/subjects/batch", randomUUID());
    }),
    bench("fingerprint (canonical JSON + SHA-256)", () => {
      requestFingerprint("POST", path, body);
    }),
    bench("validation (Ajv)", () => {
      validate({ body, query: {}, params: {}, headers: {} });
    }),
    bench("record: serialise + seal", () => {
      seal.seal(JSON.stringify({ ...record }));
    }),
    bench("replay: open + parse", () => {
      JSON.parse(seal.open(sealed) ?? "{}");
    }),
  );
});
