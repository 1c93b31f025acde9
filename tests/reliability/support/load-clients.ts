import { setTimeout as sleep } from "node:timers/promises";
import type { ApiResponse } from "../../api/support/client.js";

/** One request a load client makes, with the signal that bounds how long it may take. */
export type LoadOp = {
  name: string;
  run(signal: AbortSignal): Promise<ApiResponse>;
};

/** What became of one request: its answer, or why there was none (`timeout` past the bound). */
export type Outcome = {
  op: string;
  startedAt: number;
  endedAt: number;
  status: number | null;
  error: string | null;
  response: ApiResponse | null;
};

/** Runs one op under a time bound and records its outcome instead of throwing. */
export async function attempt(op: LoadOp, timeoutMs: number): Promise<Outcome> {
  const startedAt = Date.now();
  try {
    const response = await op.run(AbortSignal.timeout(timeoutMs));
    return { op: op.name, startedAt, endedAt: Date.now(), status: response.status, error: null, response };
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    const reason =
      e.name === "TimeoutError" || e.name === "AbortError"
        ? "timeout"
        : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { op: op.name, startedAt, endedAt: Date.now(), status: null, error: reason, response: null };
  }
}

/**
 * Closed-loop load: `clients` concurrent clients, each making the op `next()` hands it, one
 * after the other with `pauseMs` between, until `stop()` is called; `stop()` resolves with
 * every outcome once the last request has ended.
 */
export function runClients(options: {
  clients: number;
  timeoutMs: number;
  next: (client: number) => LoadOp;
  pauseMs?: number;
}) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: options.clients }, async (_, client) => {
    while (running) {
      outcomes.push(await attempt(options.next(client), options.timeoutMs));
      await sleep(options.pauseMs ?? 5);
    }
  });
  return {
    outcomes,
    async stop(): Promise<Outcome[]> {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/**
 * Load at a steady rate: request i is due at `i / rate` seconds whatever the answers before it,
 * as independent clients arrive. At most `maxInFlight` are outstanding: a platform starved of CPU
 * then falls behind the schedule (a lower achieved rate, which the caller can assert on) rather
 * than being buried under an ever-growing pile of connections. Resolves with every outcome after
 * the last request has ended.
 */
export async function runPaced(options: {
  ratePerSecond: number;
  durationMs: number;
  timeoutMs: number;
  maxInFlight: number;
  next: (index: number) => LoadOp;
}): Promise<{ outcomes: Outcome[]; elapsedMs: number }> {
  const outcomes: Outcome[] = [];
  const inFlight = new Set<Promise<void>>();
  const total = Math.round((options.ratePerSecond * options.durationMs) / 1000);
  const started = Date.now();
  let sent = 0;
  while (sent < total) {
    const now = Date.now();
    const due = Math.min(total, Math.floor(((now - started) * options.ratePerSecond) / 1000) + 1);
    for (; sent < due && inFlight.size < options.maxInFlight; sent++) {
      const request = attempt(options.next(sent), options.timeoutMs).then((outcome) => {
        outcomes.push(outcome);
        inFlight.delete(request);
      });
      inFlight.add(request);
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  return { outcomes, elapsedMs: Date.now() - started };
}
