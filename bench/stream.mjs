// C3's stream: events published straight onto the events stream, as an emitting plane's relay
// publishes them (one `subject.imported` per message, `Nats-Msg-Id` = event id), by the bench's
// own NATS user, so that the webhooks plane can be timed draining a stream filled beforehand.
import { randomUUID } from "node:crypto";
import { configSchema, eventSubject, eventsRoute, routedSubject } from "@evalp/kit";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

const route = eventsRoute(configSchema.parse({}));

/** A connection as the bench's harness user (no permission limits). */
export function connectHarness({ url, user, pass }) {
  return connect({ servers: url, user, pass, name: "bench" });
}

/**
 * Publishes `count` one-subject `subject.imported` events of `environmentId` and waits for every
 * ack (all in flight at once); resolves with their subject ids, which the receiver keys arrivals by.
 */
export async function fillEventsStream(nc, environmentId, count) {
  const js = jetstream(nc, { timeout: 30_000 });
  const subject = routedSubject(route, eventSubject(environmentId, "subject.imported"));
  const subjectIds = [];
  const acks = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const subjectId = randomUUID();
    subjectIds.push(subjectId);
    const event = {
      id,
      type: "subject.imported",
      timestamp: new Date().toISOString(),
      environment_id: environmentId,
      data: { batch_id: randomUUID(), items: 1, imported: 1, failed: 0, subject_ids: [subjectId] },
    };
    acks.push(js.publish(subject, JSON.stringify(event), { msgID: id }));
  }
  await Promise.all(acks);
  return subjectIds;
}
