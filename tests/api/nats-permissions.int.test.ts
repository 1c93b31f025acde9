import { randomUUID } from "node:crypto";
import { AUDIT_CONSUMER, natsInboxPrefix } from "@evalp/kit";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, errors, type NatsConnection } from "@nats-io/transport-node";
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

// NATS is no open bus: each process is a user of its own that may publish only what it emits and
// read only what it consumes (kit nats-permissions.ts), the layout production runs. Anything else
// on the stack's network cannot forge an event that webhooks would sign and deliver, nor an audit
// record, nor read another process's replies.
const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

/** The permission errors the server sends `nc` while `action` runs (and shortly after). */
async function refusals(nc: NatsConnection, action: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const watching = (async () => {
    for await (const status of nc.status()) {
      if (status.type === "error" && status.error instanceof errors.PermissionViolationError) {
        seen.push(`${status.error.operation} ${status.error.subject}`);
      }
    }
  })();
  await action().catch(() => undefined);
  // The server answers a refused operation asynchronously; a round trip after it has it here.
  await nc.flush();
  await new Promise((resolve) => setImmediate(resolve));
  void watching;
  return seen;
}

/** How many messages the stack's stream `name` holds on `subject`. */
async function stored(stream: string, subject: string): Promise<number> {
  const jsm = await jetstreamManager(stack.nats);
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

describe("NATS users and permissions", () => {
  it("refuse a connection without a user, or with a wrong password", async () => {
    await expect(connect({ servers: stack.config.NATS_URL })).rejects.toBeInstanceOf(
      errors.AuthorizationError,
    );
    await expect(
      connect({ servers: stack.config.NATS_URL, user: "control", pass: "not-its-password" }),
    ).rejects.toBeInstanceOf(errors.AuthorizationError);
  });

  it("refuse an event published by a process that emits none (the gateway), and store nothing", async () => {
    const subject = `${stack.config.EVENTS_SUBJECT_PREFIX}.${tenant.environmentId}.subject.imported`;
    const gateway = await stack.connectNats("gateway");
    const forged = JSON.stringify({ id: "evt_forged", type: "subject.imported", data: {} });
    expect(await refusals(gateway, async () => gateway.publish(subject, forged))).toEqual([
      `publish ${subject}`,
    ]);
    // Through JetStream too: its acknowledgement would come to an inbox the gateway may not read.
    await expect(jetstream(gateway, { timeout: 2_000 }).publish(subject, forged)).rejects.toThrow(
      /permissions violation/i,
    );
    expect(await stored(stack.config.EVENTS_STREAM, subject)).toBe(0);
    // The platform plane emits events: the same publish from it is stored (the layout is not "deny all").
    const platform = await stack.connectNats("platform");
    await jetstream(platform).publish(subject, forged, { msgID: "evt_forged" });
    expect(await stored(stack.config.EVENTS_STREAM, subject)).toBe(1);
  });

  it("hold each process to its own subjects", async () => {
    const { config } = stack;
    const cases = [
      // Only platform and webhooks audit (control stores what they send).
      { user: "interview", publish: `${config.AUDIT_SUBJECT_PREFIX}.${tenant.organizationId}` },
      { user: "control", publish: `${config.AUDIT_SUBJECT_PREFIX}.${tenant.organizationId}` },
      // Dead letters are the webhooks plane's; realtime frames the interview plane's.
      { user: "platform", publish: `${config.WEBHOOKS_SUBJECT_PREFIX}.dead_letter` },
      { user: "webhooks", publish: `${config.REALTIME_SUBJECT_PREFIX}.${tenant.environmentId}` },
      // Nobody but webhooks pulls from its consumer, nobody but control from the audit one.
      { user: "platform", publish: `$JS.API.CONSUMER.MSG.NEXT.${config.EVENTS_STREAM}.webhooks` },
      { user: "webhooks", publish: `$JS.API.CONSUMER.MSG.NEXT.${config.AUDIT_STREAM}.control-audit` },
      // No process deletes a stream.
      { user: "webhooks", publish: `$JS.API.STREAM.DELETE.${config.EVENTS_STREAM}` },
    ] as const;
    for (const { user, publish } of cases) {
      const nc = await stack.connectNats(user);
      expect(await refusals(nc, async () => nc.publish(publish, "{}")), `${user} → ${publish}`).toEqual([
        `publish ${publish}`,
      ]);
    }
    // Another process's replies (pulled events and audit records among them) and the streams'
    // subjects are not the gateway's to read.
    const gateway = await stack.connectNats("gateway");
    for (const subject of [
      `${natsInboxPrefix("control")}.>`,
      `${config.AUDIT_SUBJECT_PREFIX}.>`,
      "_INBOX.>",
    ]) {
      expect(
        await refusals(gateway, async () => gateway.subscribe(subject)),
        `gateway subscribes ${subject}`,
      ).toEqual([`subscription ${subject}`]);
    }
  });
});

describe("messages on NATS", () => {
  it("are checked like any input: an audit record that is none, or not of its subject, is refused once and not retried", async () => {
    const { config } = stack;
    const platform = await stack.connectNats("platform");
    const js = jetstream(platform);
    const record = (organizationId: string) => ({
      id: randomUUID(),
      organization_id: organizationId,
      app_id: null,
      environment_id: null,
      actor_kind: "system",
      actor_id: "system",
      action: "template.created",
      resource_type: "template",
      resource_id: randomUUID(),
      request_id: null,
      metadata: {},
      created_at: new Date().toISOString(),
    });
    const own = `${config.AUDIT_SUBJECT_PREFIX}.${tenant.organizationId}`;
    const valid = record(tenant.organizationId);
    const nowhere = record(randomUUID());
    const refused = [
      { subject: own, data: "not json" },
      { subject: own, data: JSON.stringify({ ...record(tenant.organizationId), actor_id: 42 }) },
      // Another organization's record on this one's subject.
      { subject: own, data: JSON.stringify(record(randomUUID())) },
      // An organization that does not exist.
      { subject: `${config.AUDIT_SUBJECT_PREFIX}.${nowhere.organization_id}`, data: JSON.stringify(nowhere) },
    ];
    for (const { subject, data } of refused) await js.publish(subject, data);
    await js.publish(own, JSON.stringify(valid));
    const jsm = await jetstreamManager(stack.nats);
    await vi.waitFor(
      async () => {
        const info = await jsm.consumers.info(config.AUDIT_STREAM, AUDIT_CONSUMER);
        // Every message answered for good: none waiting, none held for a redelivery.
        expect({ pending: info.num_pending, unacknowledged: info.num_ack_pending }).toEqual({
          pending: 0,
          unacknowledged: 0,
        });
      },
      { timeout: 10_000, interval: 100 },
    );
    const stored = await stack.db.query("SELECT id FROM audit_events WHERE id = ANY($1)", [
      [valid.id, nowhere.id],
    ]);
    expect(stored.rows.map((row) => row.id)).toEqual([valid.id]);
  });
});
