import type { Readable } from "node:stream";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { reads, resources, writes } from "../resource.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
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
  const { filteredList, read } = resources(app, CONTROL, deps.cursors);

  filteredList(
    "listSubjects",
    "GET /subjects",
    "subjects:read",
    {
      item: SubjectBody,
      filters: { external_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
      json: subjectJson,
    },
    ({ params, query }, page, call) =>
      subjects.listSubjects(
        { environment: environmentRef(params), page, externalId: query.external_id },
        call,
      ),
  );

  route(app, CONTROL, "exportSubject", "GET /subjects/:subject_id/export", {
    access: reads("subjects:read"),
    // The body is streamed (a Readable of the document's text); the document describes its JSON.
    response: Type.Unsafe<Readable>(Type.Ref(SUBJECT_EXPORT_ID)),
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

  route(app, CONTROL, "eraseSubject", "DELETE /subjects/:subject_id", {
    access: writes("subjects:write"),
    status: 202,
    response: ref(SubjectErasureAccepted),
    rpc: ({ params }, call) =>
      subjects.eraseSubject({ environment: environmentRef(params), subjectId: params.subject_id }, call),
    json: (answer) => erasureAcceptedJson(answer.erasure),
  });

  read("getSubjectErasure", "GET /subjects/:subject_id/erasure", "subjects:read", SubjectErasureState, {
    rpc: ({ params }, call) =>
      subjects.getSubjectErasure({ environment: environmentRef(params), subjectId: params.subject_id }, call),
    json: (answer) => erasureJson(answer.erasure),
  });
}
