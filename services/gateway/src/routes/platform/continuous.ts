import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { route, writes } from "../index.js";
import { DateTime, type ENV_PREFIX, environmentRef, FreeObject, ref, Uuid } from "../wire.js";
import type { PlatformApi } from "./index.js";
import { ContinuousAnswerReceipt, receiptJson } from "./wire.js";

/** #7 `POST ENV/continuous-evaluation/answers`: 201 when recorded, 200 with the first receipt when repeated. */
export function continuousRoutes(app: PlatformApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  route(app, "recordContinuousAnswer", "POST /continuous-evaluation/answers", writes("continuous:write"), {
    body: Type.Object(
      {
        answer: FreeObject,
        client_answer_id: Type.String({ minLength: 1, maxLength: 255 }),
        program_id: Uuid,
        question_id: Type.String({ minLength: 1, maxLength: 255 }),
        subject_id: Uuid,
        answered_at: Type.Optional(DateTime),
        delivery_id: Type.Optional(Uuid),
      },
      { additionalProperties: false },
    ),
    answer: ref(ContinuousAnswerReceipt),
    handler: async ({ request, reply, call }) => {
      const { body } = request;
      const answer = await deps.upstreams.platform.continuous.recordAnswer(
        {
          ...environmentRef(request.params),
          answer: body.answer,
          clientAnswerId: body.client_answer_id,
          programId: body.program_id,
          questionId: body.question_id,
          subjectId: body.subject_id,
          answeredAt: body.answered_at ? timestampFromDate(new Date(body.answered_at)) : undefined,
          deliveryId: body.delivery_id,
        },
        call,
      );
      const receipt = receiptJson(answer);
      if (!answer.idempotentReplay) return receipt;
      // A repeat is 200, not the declared 201: sent here, and awaited so that the route sees it sent.
      await reply.code(200).send(receipt);
      return undefined;
    },
  });
}
