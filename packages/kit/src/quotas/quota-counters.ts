import { create } from "@bufbuild/protobuf";
import { type QuotaCounters, QuotaCountersSchema } from "@evalp/proto/control/v1/quota";

/** The seven quota counters of docs/endpoints.md, as the API and the database name them. */
export const QUOTA_COUNTERS = [
  "active_participant_sessions",
  "active_subjects",
  "behavioral_event_batch_size",
  "continuous_event_batch_size",
  "evaluations",
  "programs",
  "webhook_endpoints",
] as const;
export type QuotaCounter = (typeof QUOTA_COUNTERS)[number];

/** A value per counter (limits, or usage). */
export type QuotaValues = Record<QuotaCounter, number>;

/** Each counter's field of the `QuotaCounters` message. */
const FIELD: Record<QuotaCounter, keyof Omit<QuotaCounters, "$typeName" | "$unknown">> = {
  active_participant_sessions: "activeParticipantSessions",
  active_subjects: "activeSubjects",
  behavioral_event_batch_size: "behavioralEventBatchSize",
  continuous_event_batch_size: "continuousEventBatchSize",
  evaluations: "evaluations",
  programs: "programs",
  webhook_endpoints: "webhookEndpoints",
};

/** The `QuotaCounters` message of `values`. */
export function quotaCountersMessage(values: QuotaValues): QuotaCounters {
  const message = create(QuotaCountersSchema);
  for (const counter of QUOTA_COUNTERS) message[FIELD[counter]] = BigInt(values[counter]);
  return message;
}

/** The values of a `QuotaCounters` message (0 for a counter it does not carry). */
export function quotaValues(message: QuotaCounters | undefined): QuotaValues {
  const values = {} as QuotaValues;
  for (const counter of QUOTA_COUNTERS) values[counter] = Number(message?.[FIELD[counter]] ?? 0n);
  return values;
}
