import type { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { byPath, reads, route, writes } from "../index.js";
import { type ENV_PREFIX, environmentRef, pageOfItems, pageQuery, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { exportBody, SUBJECT_EXPORT_ID } from "./subject-export.js";
import { SubjectBody, subjectJson, subjectRef } from "./wire.js";
import {
  erasureAcceptedJson,
  erasureJson,
  SubjectErasureAccepted,
  SubjectErasureState,
} from "./wire-erasures.js";

/** How long an export's streams may run: long enough for a subject with many thousands of rows. */
const EXPORT_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * The subject lifecycle under ENV (docs/subjects.md): the list, the export (streamed), the
 * erasure (`DELETE`, 202) and its state.
 */
export function subjectLifecycleRoutes(app: ControlApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const subjects = deps.upstreams.subjects;
  route(app, "listSubjects", "GET /subjects", reads("subjects:read"), {
    query: pageQuery({ external_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
    answer: pageOfItems(SubjectBody),
    list: ({ params, query }, page, call) =>
      subjects.listSubjects(
        { environment: environmentRef(params), page, externalId: query.external_id },
        call,
      ),
    item: subjectJson,
  });

  route(app, "exportSubject", "GET /subjects/:subject_id/export", reads("subjects:read"), {
    // The body is streamed (a Readable of the document's text); the document describes its JSON.
    answer: Type.Unsafe<Readable>(Type.Ref(SUBJECT_EXPORT_ID)),
    handler: async ({ request, reply, call }) => {
      const { environment, subjectId } = subjectRef(request.params);
      // 404 (another environment, unknown) or 404 `subject_erased` before a byte is sent.
      const { subject } = await subjects.getSubject({ environment, subjectId }, call);
      const asked = { environmentId: environment.environmentId, subjectId };
      const streamed = { ...call, timeoutMs: EXPORT_TIMEOUT_MS };
      const planes = deps.upstreams.subjectExports;
      reply.type("application/json; charset=utf-8");
      return exportBody(subjectJson(subject), [
        ["interview", () => planes.interview.exportSubject(asked, streamed)],
        ["platform", () => planes.platform.exportSubject(asked, streamed)],
        ["webhooks", () => planes.webhooks.exportSubject(asked, streamed)],
      ]);
    },
  });

  route(app, "eraseSubject", "DELETE /subjects/:subject_id", writes("subjects:write"), {
    answer: ref(SubjectErasureAccepted),
    ...byPath(subjects.eraseSubject, subjectRef, (answer) => erasureAcceptedJson(answer.erasure)),
  });

  route(app, "getSubjectErasure", "GET /subjects/:subject_id/erasure", reads("subjects:read"), {
    answer: ref(SubjectErasureState),
    ...byPath(subjects.getSubjectErasure, subjectRef, (answer) => erasureJson(answer.erasure)),
  });
}
