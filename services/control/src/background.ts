import type { Logger } from "@evalp/kit";

/** Work started after an answer was sent, awaited at shutdown so none is cut off. */
export type BackgroundTasks = { run(name: string, work: () => Promise<void>): void; drain(): Promise<void> };

export function createBackgroundTasks(logger: Logger): BackgroundTasks {
  const running = new Set<Promise<void>>();
  return {
    run(name, work) {
      const task = Promise.resolve()
        .then(work)
        .catch((error: unknown) => logger.error({ err: error, task: name }, "background task failed"))
        .finally(() => running.delete(task));
      running.add(task);
    },
    async drain() {
      await Promise.all(running);
    },
  };
}
