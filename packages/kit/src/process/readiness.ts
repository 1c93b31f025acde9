/**
 * A named dependency check; it resolves when the dependency answers. A check that `degrades`
 * names a dependency without which the process still serves much of its work (NATS for a
 * service whose events wait in its outbox, Redis or one plane for the gateway): when it fails
 * the process says so but stays ready, so that a load balancer does not take every replica out
 * at once over an outage that only some calls feel (they answer 503 on their own).
 */
export type ReadinessCheck = { name: string; check: () => Promise<void>; degrades?: boolean };

/** What the checks found: `failing` names every dependency that did not answer. */
export type Readiness = { ready: boolean; failing: string[] };

/** How long one readiness check may take before it counts as failing. */
const CHECK_TIMEOUT_MS = 2_000;

/**
 * Runs every check at once and names the ones that failed or did not answer in time; ready
 * unless one that does not merely degrade failed.
 */
export async function runReadiness(checks: ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async ({ name, check, degrades }) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS);
      });
      try {
        await Promise.race([check(), timeout]);
        return null;
      } catch {
        return { name, degrades: degrades === true };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const failed = results.filter((result) => result !== null);
  return { ready: failed.every((result) => result.degrades), failing: failed.map((result) => result.name) };
}

/** How a readiness answer reads over HTTP: 503 only when not ready; degraded names what failed. */
export function readinessBody({ ready, failing }: Readiness): { status: number; body: object } {
  if (!ready) return { status: 503, body: { status: "not_ready", failing } };
  return { status: 200, body: failing.length > 0 ? { status: "degraded", failing } : { status: "ready" } };
}

/**
 * Readiness reused for `reuseMs`: callers that ask often (probes from many balancers, or anyone
 * who can reach an endpoint open without a token) cost the dependencies one check per period.
 */
export function reusedReadiness(checks: ReadinessCheck[], reuseMs: number): () => Promise<Readiness> {
  let last: { at: number; readiness: Promise<Readiness> } | null = null;
  return () => {
    if (!last || performance.now() - last.at > reuseMs) {
      last = { at: performance.now(), readiness: runReadiness(checks) };
    }
    return last.readiness;
  };
}
