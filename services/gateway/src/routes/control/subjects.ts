import type { JsonObject } from "@bufbuild/protobuf";
import { type Static, Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { byPath, reads, route, writes } from "../index.js";
import { type ENV_PREFIX, environmentPage, environmentRef, Name, pageOfItems, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import {
  ProgramBody,
  programJson,
  SubjectBody,
  SubjectImport,
  subjectImportJson,
  subjectJson,
  subjectRef,
} from "./wire.js";

const SubjectItem = Type.Object(
  {
    external_id: Type.String({ minLength: 1, maxLength: 255 }),
    identity_mode: StringEnum(["enterprise_managed", "self_managed", "anonymous"]),
    // A parsed JSON body's object is JSON all the way down: what the RPC's Struct takes.
    profile: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/** A subject of an import's body as the RPC takes it. */
function subjectInput(item: Static<typeof SubjectItem>) {
  return { externalId: item.external_id, identityMode: item.identity_mode, profile: item.profile };
}

/** #5 `POST ENV/subjects/batch`, `GET ENV/subjects/{subject_id}`, `POST/GET ENV/programs` (under ENV). */
export function subjectRoutes(app: ControlApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const subjects = deps.upstreams.subjects;
  route(app, "importSubjects", "POST /subjects/batch", writes("subjects:write"), {
    body: Type.Object(
      { items: Type.Array(SubjectItem, { minItems: 1, maxItems: 100 }) },
      { additionalProperties: false },
    ),
    answer: ref(SubjectImport),
    rpc: ({ params, body }, call) =>
      subjects.importSubjects(
        { environment: environmentRef(params), items: body.items.map(subjectInput) },
        call,
      ),
    json: subjectImportJson,
  });

  route(app, "getSubject", "GET /subjects/:subject_id", reads("subjects:read"), {
    answer: ref(SubjectBody),
    ...byPath(subjects.getSubject, subjectRef, (answer) => subjectJson(answer.subject)),
  });

  route(app, "createProgram", "POST /programs", writes("subjects:write"), {
    body: Type.Object({ name: Name }, { additionalProperties: false }),
    answer: ref(ProgramBody),
    rpc: ({ params, body }, call) =>
      subjects.createProgram({ environment: environmentRef(params), name: body.name }, call),
    json: (answer) => programJson(answer.program),
  });

  route(app, "listPrograms", "GET /programs", reads("org:read"), {
    answer: pageOfItems(ProgramBody),
    list: ({ params }, page, call) => subjects.listPrograms(environmentPage(params, page), call),
    item: programJson,
  });
}
