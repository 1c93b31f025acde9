import type { JsonObject } from "@bufbuild/protobuf";
import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, Page, PageQuery, ref } from "../schemas.js";
import {
  ProgramBody,
  programJson,
  SubjectBody,
  SubjectImport,
  subjectImportJson,
  subjectJson,
} from "./wire.js";

const TAG = "control";

const SubjectItem = Type.Object(
  {
    external_id: Type.String({ minLength: 1, maxLength: 255 }),
    identity_mode: StringEnum(["enterprise_managed", "self_managed", "anonymous"]),
    // A parsed JSON body's object is JSON all the way down: what the RPC's Struct takes.
    profile: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/** #5 `POST ENV/subjects/batch`, `GET ENV/subjects/{subject_id}`, `POST/GET ENV/programs` (under ENV). */
export function subjectRoutes(app: Api, deps: RouteDeps): void {
  const subjects = deps.upstreams.subjects;

  route(app, TAG, {
    method: "POST",
    url: "/subjects/batch",
    operationId: "importSubjects",
    summary: "Import subjects",
    description:
      "Upserts up to 100 subjects by `external_id`: a known one keeps its id and takes the new " +
      "profile. Each item gets a receipt: its `subject_id`, or an `error_code` " +
      "(`quota_exceeded`, or `duplicate_in_batch` for a later item repeating an `external_id`). " +
      "Requires `subjects:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "subjects:write", idempotency: "required" },
    params: EnvParams,
    body: Type.Object(
      { items: Type.Array(SubjectItem, { minItems: 1, maxItems: 100 }) },
      { additionalProperties: false },
    ),
    response: ref(SubjectImport),
    responseDescription: "A receipt per item.",
    handler: async ({ request, call }) => {
      const items = request.body.items.map((item) => ({
        externalId: item.external_id,
        identityMode: item.identity_mode,
        profile: item.profile,
      }));
      const answer = await subjects.importSubjects(
        { environment: environmentRef(request.params), items },
        call,
      );
      return subjectImportJson(answer);
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/subjects/:subject_id",
    operationId: "getSubject",
    summary: "Get a subject",
    description: "One subject of the environment. Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: Type.Composite([EnvParams, Type.Object({ subject_id: Type.String() })]),
    response: ref(SubjectBody),
    responseDescription: "The subject.",
    handler: async ({ request, call }) => {
      const answer = await subjects.getSubject(
        { environment: environmentRef(request.params), subjectId: request.params.subject_id },
        call,
      );
      return subjectJson(answer.subject);
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/programs",
    operationId: "createProgram",
    summary: "Create a program",
    description:
      "Creates a program of the environment. It counts against the `programs` quota: 409 " +
      "`quota_exceeded` past it. Requires `subjects:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "subjects:write", idempotency: "required" },
    params: EnvParams,
    body: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 200 }) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(ProgramBody),
    responseDescription: "The program, created.",
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await subjects.createProgram(
        { environment: environmentRef(request.params), name: request.body.name },
        call,
      );
      return programJson(answer.program);
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/programs",
    operationId: "listPrograms",
    summary: "List programs",
    description:
      "The environment's programs, newest first, a page at a time (docs/paging.md). Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: EnvParams,
    querystring: PageQuery,
    response: Page(ProgramBody, "ProgramPage"),
    responseDescription: "A page of programs.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => subjects.listPrograms({ environment: environmentRef(request.params), page }, call),
        programJson,
      ),
  });
}
