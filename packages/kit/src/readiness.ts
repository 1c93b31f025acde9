/** A named dependency check; it resolves when the dependency answers. */
export type ReadinessCheck = { name: string; check: () => Promise<void> };

/** How long one readiness check may take before it counts as failing. */
const CHECK_TIMEOUT_MS = 2_000;

/** Runs every check at once and names the ones that failed or did not answer in time. */
export async function runReadiness(checks: ReadinessCheck[]): Promise<{ ready: boolean; failing: string[] }> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), CHECK_TIMEOUT_MS);
      });
      try {
        await Promise.race([check(), timeout]);
        return null;
      } catch {
        return name;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const failing = results.filter((name): name is string => name !== null);
  return { ready: failing.length === 0, failing };
}
