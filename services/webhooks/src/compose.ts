import {
  type ComposeProcess,
  connectNats,
  eventsRoute,
  type NatsConnection,
  pingNats,
  planeClients,
  type ServiceProcess,
  serviceBase,
  serviceCaller,
} from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { QuotaService } from "@evalp/proto/control/v1/quota";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { webhooksRetention } from "./db/retention.js";
import { createEnvironmentIdCheck } from "./environment-id-check.js";
import { createLiveEvents } from "./live-events.js";
import { createSecretSealer, resealSecrets } from "./sealed-secrets.js";
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
  // Endpoint secrets are sealed under WEBHOOK_SECRETS_KEYS (required in production).
  const sealer = createSecretSealer(config);
  base.retain(webhooksRetention(config, sealer));
  const ofControl = planeClients("control", config, serviceCaller(config, "webhooks", base.registry));
  const control = {
    organizations: ofControl(OrganizationService),
    quotas: ofControl(QuotaService),
    subjects: ofControl(SubjectService),
  };
  const workers = createWebhookWorkers({
    pool,
    sealer,
    logger,
    config,
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
  const live = createLiveEvents({ nats: () => nats, route: eventsRoute(config), logger });
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
      sealer,
      requireEnvironmentId: createEnvironmentIdCheck(control),
      wake: workers.wake,
      live,
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
    listening() {
      // Registered after the servers, so run before them: their close waits for open streams.
      shutdown.register("listeners", async () => live.close());
      workers.start();
      // Rows stored in plain (before secrets were sealed) or under a key rotated out of first
      // place are sealed under the current key; retention repeats it at each round.
      resealSecrets(pool, sealer).then(
        (done) => {
          if (done.resealed > 0 || done.unopened > 0) logger.info(done, "webhook secrets re-sealed");
          if (done.unopened > 0) {
            logger.error(
              { unopened: done.unopened },
              "webhook secrets sealed under a key WEBHOOK_SECRETS_KEYS no longer holds: their endpoints cannot be signed for",
            );
          }
        },
        (error: unknown) =>
          logger.warn({ err: error }, "re-sealing webhook secrets failed; retention retries"),
      );
    },
    // NATS may come up after this process: RPCs and deliveries already stored are served meanwhile.
    async connect() {
      nats = await connectNats(base.natsConfig, "webhooks", logger);
      await workers.connect(nats);
    },
  });
};
