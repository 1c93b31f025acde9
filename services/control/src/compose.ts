import {
  auditRoute,
  type ComposeProcess,
  type DurableConsumer,
  planeClients,
  type ServiceProcess,
  serviceBase,
  serviceCaller,
} from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import { createAuditConsumer } from "./audit-consumer.js";
import { createBackgroundTasks } from "./background.js";
import { controlRetention } from "./db/retention.js";
import { createMailer } from "./mailer.js";
import { controlService, SCHEMA } from "./server.js";

/**
 * The control process: its RPCs, the background tasks they start (awaited at shutdown), its
 * outbox relay and the consumer of every plane's audit records.
 */
export const createControl: ComposeProcess<ServiceProcess> = async (config, logger, options = {}) => {
  const ports = { port: 8081, opsPort: 9081 };
  const base = serviceBase({ name: "control", schema: SCHEMA, ports }, config, logger, options);
  const { pool, shutdown } = base;
  base.retain(controlRetention(config));
  const tasks = createBackgroundTasks(logger);
  shutdown.register("background tasks", () => tasks.drain());
  const mailer = createMailer({
    smtpUrl: config.SMTP_URL,
    mailDir: config.MAIL_DIR,
    from: config.MAIL_FROM,
    replyTo: config.MAIL_REPLY_TO,
    logger,
  });
  const publisher = base.outboxRelay();
  let audit: DurableConsumer | null = null;
  // Registered after the relay, so stopped before it (last registered runs first).
  shutdown.register("audit consumer", async () => audit?.stop());
  const caller = serviceCaller(config, "control", base.registry);
  const service = controlService({
    pool,
    config,
    logger,
    mailer,
    tasks,
    usage: {
      interview: planeClients("interview", config, caller)(UsageService),
      webhooks: planeClients("webhooks", config, caller)(UsageService),
    },
  });
  // Events wait in the outbox until NATS answers; the API does not depend on it.
  return base.serve(service, {
    async connect() {
      const nats = await publisher.start();
      audit = createAuditConsumer({
        pool,
        nc: nats,
        route: auditRoute(config),
        logger,
        metrics: base.registry,
      });
      audit.start();
    },
  });
};
