import type { Logger } from "pino";

type Step = { name: string; run: () => Promise<void> };

/** One per process: closes what was opened, in reverse order, within a deadline. */
export type ShutdownManager = {
  /** Registers a teardown as soon as its dependency exists; teardowns run last-registered first. */
  register(name: string, run: () => Promise<void>): void;
  /** Runs every teardown once; later calls return the same promise. */
  shutdown(reason: string): Promise<void>;
  /** Installs SIGTERM/SIGINT handlers that shut down and exit 0 (1 when the deadline passes). */
  listen(): void;
};

/**
 * Stop taking work, drain with a deadline, close clients, exit. Servers are registered after
 * the clients they use, so they close first and in-flight requests still have their clients.
 */
export function createShutdownManager(logger: Logger, graceMs: number): ShutdownManager {
  const steps: Step[] = [];
  let running: Promise<void> | null = null;

  async function runAll(reason: string): Promise<void> {
    logger.info({ reason }, "shutting down");
    for (const step of [...steps].reverse()) {
      try {
        await step.run();
      } catch (error) {
        logger.error({ err: error, step: step.name }, "shutdown step failed");
      }
    }
    logger.info("shut down");
  }

  const manager: ShutdownManager = {
    register(name, run) {
      steps.push({ name, run });
    },
    shutdown(reason) {
      running ??= runAll(reason);
      return running;
    },
    listen() {
      const onSignal = (signal: NodeJS.Signals) => {
        const deadline = setTimeout(() => {
          logger.error({ grace_ms: graceMs }, "shutdown deadline passed");
          process.exit(1);
        }, graceMs);
        deadline.unref();
        void manager.shutdown(signal).then(() => {
          clearTimeout(deadline);
          process.exit(0);
        });
      };
      process.once("SIGTERM", onSignal);
      process.once("SIGINT", onSignal);
    },
  };
  return manager;
}
