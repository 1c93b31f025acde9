import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { resources, writes } from "../resource.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { CONTROL } from "./plane.js";
import {
  erasureAcceptedJson,
  erasureJson,
  SubjectErasureAccepted,
  SubjectErasureState,
} from "./subject-wire.js";
import { SubjectBody, subjectJson } from "./wire.js";

/**
 * The subject lifecycle under ENV (docs/subjects.md): the list, the erasure (`DELETE`, 202) and
 * its state.
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
