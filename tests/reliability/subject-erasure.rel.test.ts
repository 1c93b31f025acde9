import { type Receiver, startReceiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { createTenant, ik, type Tenant } from "../api/support/fixtures.js";
import { createSubject } from "../api/support/interview.js";
import { type PlatformProcesses, startProcesses } from "../api/support/processes.js";
import { createEndpoint } from "../api/support/webhooks.js";

let platform: PlatformProcesses;
let api: ApiClient;
let receiver: Receiver;
let tenant: Tenant;

beforeAll(async () => {
  receiver = await startReceiver();
  platform = await startProcesses({ env: { WEBHOOK_ALLOW_PRIVATE: "true" } });
  api = apiClient(platform.url);
  tenant = await createTenant(api);
  await createEndpoint(api, tenant, { url: `${receiver.url}/erased`, event_types: ["subject.erased"] });
});

afterAll(async () => {
  await platform?.close();
  await receiver?.close();
});

async function erasureOf(subjectId: string) {
  const state = await api.get(`${tenant.env}/subjects/${subjectId}/erasure`, { token: tenant.token });
  expect(state.status, JSON.stringify(state.body)).toBe(200);
  return state.body as { status: string; planes: Record<string, string>; completed_at: string | null };
}

/** The `subject.erased` events the receiver got about the subject. */
function erasedEvents(subjectId: string) {
  return receiver.requests
    .map((request) => ({ id: request.headers["webhook-id"], event: JSON.parse(request.body) }))
    .filter(({ event }) => event.type === "subject.erased" && event.data.subject_id === subjectId);
}

describe("a subject erasure across a crash", () => {
  for (const victim of ["webhooks", "interview"] as const) {
    it(`completes after ${victim} is SIGKILLed while it is pending and started again; subject.erased is delivered once`, async () => {
      const subjectId = await createSubject(api, tenant);
      expect(await platform.kill(victim, "SIGKILL")).toBe("SIGKILL");

      const erased = await api.call("DELETE", `${tenant.env}/subjects/${subjectId}`, undefined, {
        token: tenant.token,
        idempotencyKey: ik(),
      });
      expect(erased.status, JSON.stringify(erased.body)).toBe(202);
      // The other planes finish; the dead one's part waits in the events stream.
      await vi.waitFor(
        async () => {
          const state = await erasureOf(subjectId);
          const others = Object.entries(state.planes).filter(([plane]) => plane !== victim);
          expect(
            others.every(([, status]) => status === "completed"),
            JSON.stringify(state),
          ).toBe(true);
        },
        { timeout: 20_000, interval: 200 },
      );
      const pending = await erasureOf(subjectId);
      expect(pending.status).toBe("pending");
      expect(pending.planes[victim]).toBe("pending");
      expect(erasedEvents(subjectId)).toEqual([]);

      await platform.start(victim);
      await platform.ready();
      const done = await vi.waitFor(
        async () => {
          const state = await erasureOf(subjectId);
          expect(state.status, JSON.stringify(state)).toBe("completed");
          return state;
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(done.planes).toEqual({
        control: "completed",
        interview: "completed",
        platform: "completed",
        webhooks: "completed",
      });
      // Delivered once, and its one delivery succeeded at its first attempt: nothing comes after it.
      const [event] = await vi.waitFor(
        async () => {
          const found = erasedEvents(subjectId);
          expect(found).toHaveLength(1);
          const listed = await api.get(`${tenant.env}/webhook-deliveries?limit=100`, { token: tenant.token });
          const deliveries = listed.body.items.filter(
            (delivery: { event_id: string }) => delivery.event_id === found[0]?.id,
          );
          expect(deliveries).toEqual([expect.objectContaining({ status: "succeeded", attempt_count: 1 })]);
          return found;
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(event?.event.data).toEqual({
        subject_id: subjectId,
        requested_at: erased.body.erasure.requested_at,
        completed_at: done.completed_at,
      });
      expect(erasedEvents(subjectId)).toHaveLength(1);
    });
  }
});
