import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import type { RouteDeps } from "../deps.js";
import type { EnvPath } from "../environment.js";
import { COMMON_ERRORS, DateTime, EnvParams, ErrorBody, IdempotentHeaders, Uuid } from "../schemas.js";

const Receipt = Type.Object(
  {
    id: Uuid,
    client_answer_id: Type.String(),
    question_id: Type.String(),
    idempotent_replay: Type.Boolean(),
    delivery_id: Type.Optional(Uuid),
  },
  { title: "ContinuousAnswerReceipt" },
);

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** #7 `POST ENV/continuous-evaluation/answers`: 201 when recorded, 200 with the first receipt when repeated. */
export function continuousRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    `${ENV}/continuous-evaluation/answers`,
    {
      config: { access: { auth: "operator", scope: "continuous:write", idempotency: "required" } },
      schema: {
        tags: ["platform"],
        summary: "Record an answer outside an interview; repeats are deduplicated by client_answer_id",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            answer: Type.Record(Type.String(), Type.Unknown()),
            client_answer_id: Type.String({ minLength: 1, maxLength: 255 }),
            program_id: Uuid,
            question_id: Type.String({ minLength: 1, maxLength: 255 }),
            subject_id: Uuid,
            answered_at: Type.Optional(DateTime),
            delivery_id: Type.Optional(Uuid),
          },
          { additionalProperties: false },
        ),
        response: { 200: Receipt, 201: Receipt, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const params = request.params as EnvPath;
      const body = request.body as {
        answer: JsonObject;
        client_answer_id: string;
        program_id: string;
        question_id: string;
        subject_id: string;
        answered_at?: string;
        delivery_id?: string;
      };
      const answer = await deps.upstreams.platform.continuous.recordAnswer(
        {
          organizationId: params.organization_id,
          appId: params.app_id,
          environmentId: params.environment_id,
          answer: body.answer,
          clientAnswerId: body.client_answer_id,
          programId: body.program_id,
          questionId: body.question_id,
          subjectId: body.subject_id,
          answeredAt: body.answered_at ? timestampFromDate(new Date(body.answered_at)) : undefined,
          deliveryId: body.delivery_id,
        },
        callOptions(request),
      );
      return reply.code(answer.idempotentReplay ? 200 : 201).send({
        id: answer.id,
        client_answer_id: answer.clientAnswerId,
        question_id: answer.questionId,
        idempotent_replay: answer.idempotentReplay,
        ...(answer.deliveryId ? { delivery_id: answer.deliveryId } : {}),
      });
    },
  );
}
