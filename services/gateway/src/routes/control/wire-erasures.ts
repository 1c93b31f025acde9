import type { SubjectErasure } from "@evalp/proto/control/v1/subject";
import { Type } from "@sinclair/typebox";
import { iso, isoOrNull } from "../../http/timestamps.js";
import { DateTime, named, nullable, Uuid } from "../wire.js";

// A subject's erasure on the wire (docs/subjects.md#erasure).

const PlaneStatus = Type.Union([Type.Literal("pending"), Type.Literal("completed")]);
const ErasureStatus = Type.Union([Type.Literal("pending"), Type.Literal("completed")], {
  description: "`completed` once every plane erased what it held.",
});

export const SubjectErasureState = Type.Object(
  {
    subject_id: Uuid,
    status: ErasureStatus,
    requested_at: DateTime,
    completed_at: nullable(DateTime),
    planes: Type.Object(
      { control: PlaneStatus, interview: PlaneStatus, platform: PlaneStatus, webhooks: PlaneStatus },
      {
        additionalProperties: false,
        description: "Each plane's part: `completed` once it erased what it held.",
      },
    ),
  },
  named("SubjectErasure", "The state of a subject's erasure."),
);

export const SubjectErasureAccepted = Type.Object(
  {
    subject_id: Uuid,
    erasure: Type.Object({ status: ErasureStatus, requested_at: DateTime }, { additionalProperties: false }),
  },
  named("SubjectErasureAccepted", "An erasure asked for: it goes on in every plane."),
);

const planeStatus = (at: SubjectErasure["controlAt"]) =>
  (at ? "completed" : "pending") as "pending" | "completed";

export function erasureJson(erasure: SubjectErasure | undefined) {
  return {
    subject_id: erasure?.subjectId ?? "",
    status: planeStatus(erasure?.completedAt),
    requested_at: iso(erasure?.requestedAt),
    completed_at: isoOrNull(erasure?.completedAt),
    planes: {
      control: planeStatus(erasure?.controlAt),
      interview: planeStatus(erasure?.interviewAt),
      platform: planeStatus(erasure?.platformAt),
      webhooks: planeStatus(erasure?.webhooksAt),
    },
  };
}

export function erasureAcceptedJson(erasure: SubjectErasure | undefined) {
  const state = erasureJson(erasure);
  return {
    subject_id: state.subject_id,
    erasure: { status: state.status, requested_at: state.requested_at },
  };
}

export const SUBJECT_ERASURE_SCHEMAS = [SubjectErasureState, SubjectErasureAccepted];
