import type { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { pageOfItems, pageQuery } from "../lists.js";
import { type Api, reads, route, writes } from "../route.js";
import { ref } from "../schemas.js";
import { CONTROL } from "./prose.js";
import { exportBody, SUBJECT_EXPORT_ID } from "./subject-export.js";
import { SubjectBody, subjectJson } from "./wire.js";
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
export function subjectLifecycleRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const subjects = deps.upstreams.subjects;
  route(app, CONTROL, {
    id: "listSubjects",
    method: "GET",
    path: "/subjects",
    access: reads("subjects:read"),
    query: pageQuery({ external_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }),
    answer: pageOfItems(SubjectBody),
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) =>
          subjects.listSubjects(
            { environment: environmentRef(request.params), page, externalId: request.query.external_id },
            call,
          ),
        subjectJson,
      ),
  });

  route(app, CONTROL, {
    id: "exportSubject",
    method: "GET",
    path: "/subjects/:subject_id/export",
    access: reads("subjects:read"),
    // The body is streamed (a Readable of the document's text); the document describes its JSON.
    answer: Type.Unsafe<Readable>(Type.Ref(SUBJECT_EXPORT_ID)),
    handler: async ({ request, reply, call }) => {
      const environment = environmentRef(request.params);
      const subjectId = request.params.subject_id;
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

  route(app, CONTROL, {
    id: "eraseSubject",
    method: "DELETE",
    path: "/subjects/:subject_id",
    access: writes("subjects:write"),
    status: 202,
    answer: ref(SubjectErasureAccepted),
    rpc: ({ params }, call) =>
      subjects.eraseSubject({ environment: environmentRef(params), subjectId: params.subject_id }, call),
    json: (answer) => erasureAcceptedJson(answer.erasure),
  });

  route(app, CONTROL, {
    id: "getSubjectErasure",
    method: "GET",
    path: "/subjects/:subject_id/erasure",
    access: reads("subjects:read"),
    answer: ref(SubjectErasureState),
    rpc: ({ params }, call) =>
      subjects.getSubjectErasure({ environment: environmentRef(params), subjectId: params.subject_id }, call),
    json: (answer) => erasureJson(answer.erasure),
  });
}
