import type { JsonObject } from "@bufbuild/protobuf";
import type { Program, Subject } from "@evalp/proto/control/v1/subject";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { COMMON_ERRORS, DateTime, EnvParams, IdempotentHeaders, Page, PageQuery, Uuid } from "../schemas.js";

const IDENTITY_MODES = ["enterprise_managed", "self_managed", "anonymous"] as const;
const Profile = Type.Record(Type.String(), Type.Unknown());

const SubjectItem = Type.Object(
  {
    external_id: Type.String({ minLength: 1, maxLength: 255 }),
    identity_mode: StringEnum(IDENTITY_MODES),
    profile: Profile,
  },
  { additionalProperties: false },
);

const SubjectBody = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    external_id: Type.String(),
    identity_mode: Type.String(),
    profile: Profile,
    created_at: DateTime,
    updated_at: DateTime,
  },
  { title: "Subject" },
);

const ProgramBody = Type.Object(
  { id: Uuid, environment_id: Uuid, name: Type.String(), created_at: DateTime },
  { title: "Program" },
);

function subjectJson(subject: Subject | undefined) {
  if (!subject) throw new Error("upstream returned no subject");
  return {
    id: subject.id,
    environment_id: subject.environmentId,
    external_id: subject.externalId,
    identity_mode: subject.identityMode,
    profile: subject.profile ?? {},
    created_at: iso(subject.createdAt),
    updated_at: iso(subject.updatedAt),
  };
}

function programJson(program: Program | undefined) {
  if (!program) throw new Error("upstream returned no program");
  return {
    id: program.id,
    environment_id: program.environmentId,
    name: program.name,
    created_at: iso(program.createdAt),
  };
}

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** #5 `POST ENV/subjects/batch`, `GET ENV/subjects/{subject_id}`, `POST/GET ENV/programs`. */
export function subjectRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    `${ENV}/subjects/batch`,
    {
      config: { access: { auth: "operator", scope: "subjects:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Upsert subjects by external_id, with a receipt per item",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { items: Type.Array(SubjectItem, { minItems: 1, maxItems: 100 }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object(
            {
              batch_id: Uuid,
              idempotent_replay: Type.Boolean(),
              receipts: Type.Array(
                Type.Object({
                  item_index: Type.Integer(),
                  subject_id: Type.String(),
                  error_code: Type.String(),
                }),
              ),
            },
            { title: "SubjectImport" },
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const body = request.body as {
        items: { external_id: string; identity_mode: string; profile: JsonObject }[];
      };
      const answer = await deps.upstreams.subjects.importSubjects(
        {
          environment: environmentRef(request.params as EnvPath),
          items: body.items.map((item) => ({
            externalId: item.external_id,
            identityMode: item.identity_mode,
            profile: item.profile,
          })),
        },
        callOptions(request),
      );
      return {
        batch_id: answer.batchId,
        idempotent_replay: false,
        receipts: answer.receipts.map((receipt) => ({
          item_index: receipt.itemIndex,
          subject_id: receipt.subjectId,
          error_code: receipt.errorCode,
        })),
      };
    },
  );

  app.get(
    `${ENV}/subjects/:subject_id`,
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "Get a subject",
        params: Type.Composite([EnvParams, Type.Object({ subject_id: Type.String() })]),
        response: { 200: SubjectBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EnvPath & { subject_id: string };
      const answer = await deps.upstreams.subjects.getSubject(
        { environment: environmentRef(params), subjectId: params.subject_id },
        callOptions(request),
      );
      return subjectJson(answer.subject);
    },
  );

  app.post(
    `${ENV}/programs`,
    {
      config: { access: { auth: "operator", scope: "subjects:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Create a program (counts against the programs quota)",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 200 }) },
          { additionalProperties: false },
        ),
        response: { 201: ProgramBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const { name } = request.body as { name: string };
      const answer = await deps.upstreams.subjects.createProgram(
        { environment: environmentRef(request.params as EnvPath), name },
        callOptions(request),
      );
      return reply.code(201).send(programJson(answer.program));
    },
  );

  app.get(
    `${ENV}/programs`,
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "List programs, newest first",
        params: EnvParams,
        querystring: PageQuery,
        response: { 200: Page(ProgramBody, "ProgramPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await deps.upstreams.subjects.listPrograms(
        { environment: environmentRef(request.params as EnvPath), page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(programJson), answer.page);
    },
  );
}
