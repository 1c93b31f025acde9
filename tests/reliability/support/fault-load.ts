import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

/** One request of the load as the client saw it. `status` 0: no answer within the bound. */
export type Sample = {
  kind: "read" | "write";
  route: string;
  status: number;
  body: unknown;
  requestId: string | null;
  retryAfter: string | null;
  /** `Date.now()` when the request was sent. */
  startedAt: number;
  ms: number;
  error?: string;
};

/** A write the platform acknowledged (2xx): it must be readable afterwards. */
export type AcknowledgedWrite = {
  /** The Idempotency-Key it was sent with, and its body: sending both again must replay it. */
  key: string;
  body: unknown;
  externalId: string;
  subjectId: string;
  batchId: string;
  startedAt: number;
  endedAt: number;
};

export type Load = {
  samples: Sample[];
  writes: AcknowledgedWrite[];
  /** Lets every client finish the request in hand, then stops. */
  stop(): Promise<void>;
};

export type LoadOptions = {
  /** The gateway's base URL. */
  url: string;
  /** The environment path (`/v1/organizations/…/environments/…`). */
  env: string;
  /** The app path, read as a cheap authenticated GET. */
  app: string;
  apiKey: string;
  /** Concurrent clients, each sending one request at a time. */
  clients: number;
  /** Names the subjects this load writes, so that runs never collide. */
  label: string;
  /** A request that has no answer within this time counts as hung (status 0). */
  boundMs: number;
  /** Each client's pause between requests. */
  pauseMs?: number;
  /** Headers of each request, asked anew for each (an `X-Forwarded-For` per request). */
  headers?: () => Record<string, string>;
};

/**
 * A few clients in a loop, as backends using the API would be: every other request is an
 * idempotent write (`POST ENV/subjects/batch` of one subject, with an Idempotency-Key), the others
 * read (`GET APP`, `GET ENV/subjects/{id}` of a subject written before). A write answered 503 is
 * sent again with the same key and body, as a client retrying would; a write with no answer is
 * abandoned (its key may still be held by the request in flight).
 */
export function startLoad(options: LoadOptions): Load {
  const samples: Sample[] = [];
  const writes: AcknowledgedWrite[] = [];
  const pauseMs = options.pauseMs ?? 20;
  let stopped = false;

  async function send(
    kind: Sample["kind"],
    route: string,
    path: string,
    init: { method: string; body?: unknown; idempotencyKey?: string },
  ): Promise<Sample> {
    const headers: Record<string, string> = { ...options.headers?.(), "x-api-key": options.apiKey };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (init.idempotencyKey) headers["idempotency-key"] = init.idempotencyKey;
    const startedAt = Date.now();
    const began = performance.now();
    const sample: Sample = {
      kind,
      route,
      status: 0,
      body: null,
      requestId: null,
      retryAfter: null,
      startedAt,
      ms: 0,
    };
    try {
      const response = await fetch(`${options.url}${path}`, {
        method: init.method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(options.boundMs),
      });
      const text = await response.text();
      sample.status = response.status;
      sample.requestId = response.headers.get("x-request-id");
      sample.retryAfter = response.headers.get("retry-after");
      try {
        sample.body = text ? JSON.parse(text) : null;
      } catch {
        sample.body = text;
      }
    } catch (error) {
      sample.error = String(error);
    }
    sample.ms = performance.now() - began;
    samples.push(sample);
    return sample;
  }

  async function client(index: number): Promise<void> {
    let pending: { key: string; externalId: string; body: unknown } | null = null;
    for (let n = 0; !stopped; n++) {
      if (n % 2 === 0) {
        const externalId: string = pending?.externalId ?? `${options.label}-${index}-${n}`;
        pending ??= {
          key: randomUUID(),
          externalId,
          body: { items: [{ external_id: externalId, identity_mode: "anonymous", profile: { index, n } }] },
        };
        const sample = await send("write", "POST ENV/subjects/batch", `${options.env}/subjects/batch`, {
          method: "POST",
          idempotencyKey: pending.key,
          body: pending.body,
        });
        // After a 503 the write stays pending: the next write slot sends it again, same key and body.
        if (sample.status !== 503) {
          const sent = pending;
          pending = null;
          const answer = sample.body as { batch_id?: string; receipts?: { subject_id: string }[] } | null;
          const subjectId = answer?.receipts?.[0]?.subject_id;
          if (sample.status >= 200 && sample.status < 300 && subjectId && answer?.batch_id) {
            writes.push({
              key: sent.key,
              body: sent.body,
              externalId,
              subjectId,
              batchId: answer.batch_id,
              startedAt: sample.startedAt,
              endedAt: Date.now(),
            });
          }
        }
      } else {
        const known = writes[Math.floor(Math.random() * writes.length)];
        if (known && n % 4 === 1) {
          await send("read", "GET ENV/subjects/{id}", `${options.env}/subjects/${known.subjectId}`, {
            method: "GET",
          });
        } else {
          await send("read", "GET APP", options.app, { method: "GET" });
        }
      }
      await sleep(pauseMs);
    }
  }

  const running = Promise.all(Array.from({ length: options.clients }, (_, index) => client(index)));
  return {
    samples,
    writes,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * One `/readyz` probe: its HTTP status (0: no answer within the bound), the state its body
 * names (`ready`, `degraded`, `not_ready`, `draining`) and the dependencies it names as failing.
 */
export type Probe = { at: number; status: number; state: string; ms: number; failing: string[] };

export type ReadinessWatch = {
  probes: Probe[];
  /** The states in order with repeats collapsed (`["ready", "degraded", "ready"]`); a status other than 200 as its number. */
  transitions(): string[];
  stop(): Promise<void>;
};

/** Probes a `/readyz` (the gateway's, or a service's ops port) every `everyMs` until stopped. */
export function watchReadiness(url: string, boundMs: number, everyMs = 150): ReadinessWatch {
  const probes: Probe[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      const began = performance.now();
      const probe: Probe = { at, status: 0, state: "", ms: 0, failing: [] };
      try {
        const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(boundMs) });
        probe.status = response.status;
        const body = (await response.json().catch(() => ({}))) as { status?: string; failing?: string[] };
        probe.state = body.status ?? "";
        probe.failing = body.failing ?? [];
      } catch {
        // No answer: status 0.
      }
      probe.ms = performance.now() - began;
      probes.push(probe);
      await sleep(everyMs);
    }
  })();
  return {
    probes,
    transitions: () =>
      probes
        .map((probe) => (probe.status === 200 ? probe.state : String(probe.status)))
        .filter((state, index, all) => index === 0 || all[index - 1] !== state),
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
