import {
  type ComposeProcess,
  connectNats,
  directDatabaseUrl,
  type NatsConnection,
  pingNats,
  type ServiceProcess,
  serviceBase,
} from "@evalp/kit";
import { createControlClients } from "./control-clients.js";
import { webhooksRetention } from "./db/retention.js";
import { createEnvironmentScope } from "./environment-scope.js";
import { SCHEMA, webhooksService } from "./server.js";
import { createWebhookWorkers } from "./workers.js";

/**
 * The webhooks process: its RPCs and its workers (the delivery dispatcher, which needs Postgres
 * only, and the events consumer and outbox relay, which wait for NATS).
 */
export const createWebhooks: ComposeProcess<ServiceProcess> = async (config, logger, options = {}) => {
  const ports = { port: 8084, opsPort: 9084 };
  const base = serviceBase({ name: "webhooks", schema: SCHEMA, ports }, config, logger, options);
  const { pool, shutdown } = base;
  base.retain(webhooksRetention(config));
  const control = createControlClients(config, base.registry);
  const workers = createWebhookWorkers({
    pool,
    logger,
    config,
    databaseUrl: directDatabaseUrl(config),
    metrics: base.registry,
    reportErasure: async (order) => {
      await control.subjects.completeSubjectErasure({
        environmentId: order.environmentId,
        subjectId: order.subjectId,
        plane: "webhooks",
      });
    },
  });
  let nats: NatsConnection | null = null;
  // At shutdown (last registered first): the servers stop taking calls, then the workers stop
  // (attempts in flight get half the grace) and NATS drains, then the pool ends.
  shutdown.register("workers", async () => {
    await workers.stop(Math.floor(config.SHUTDOWN_GRACE_MS / 2));
    await nats?.drain();
  });
  const service = webhooksService(
    {
      pool,
      logger,
      config,
      control,
      requireEnvironment: createEnvironmentScope(control),
      wake: workers.wake,
    },
    [
      {
        name: "nats",
        // Deliveries already stored go on, and so do the plane's calls; new events wait in the stream.
        degrades: true,
        check: async () => {
          if (!nats) throw new Error("nats not connected yet");
          await pingNats(nats);
        },
      },
    ],
  );
  return base.serve(service, {
    listening: () => workers.start(),
    // NATS may come up after this process: RPCs and deliveries already stored are served meanwhile.
    async connect() {
      nats = await connectNats(base.natsConfig, "webhooks", logger);
      await workers.connect(nats);
    },
  });
};
