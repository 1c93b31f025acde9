import {
  type ComposeProcess,
  createOutboxPublisher,
  createSubjectErasureConsumer,
  type DurableConsumer,
  eventsRoute,
  planeClients,
  type ServiceProcess,
  serviceBase,
  serviceCaller,
  withTransaction,
} from "@evalp/kit";
import { OrganizationService } from "@evalp/proto/control/v1/organization";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import { WebhookDeliveryService } from "@evalp/proto/webhooks/v1/delivery";
import { platformRetention } from "./db/retention.js";
import { eraseSubjectAnswers } from "./db/subject-data.js";
import { platformService, SCHEMA } from "./server.js";

/** The platform process: its RPCs and its outbox relay. */
export const createPlatform: ComposeProcess<ServiceProcess> = async (config, logger, options = {}) => {
  const ports = { port: 8082, opsPort: 9082 };
  const base = serviceBase({ name: "platform", schema: SCHEMA, ports }, config, logger, options);
  const { pool, shutdown } = base;
  base.retain(platformRetention(config));
  const publisher = createOutboxPublisher({
    name: "platform",
    config: base.natsConfig,
    pool,
    logger,
    metrics: base.registry,
  });
  // After the servers have closed (last registered runs first), the relay publishes what it holds.
  shutdown.register("outbox relay", () => publisher.stop());
  let erasures: DurableConsumer | null = null;
  shutdown.register("erasure consumer", async () => erasures?.stop());
  const caller = serviceCaller(config, "platform", base.registry);
  const ofControl = planeClients("control", config, caller);
  const control = { organizations: ofControl(OrganizationService), subjects: ofControl(SubjectService) };
  const service = platformService({
    pool,
    logger,
    config,
    control,
    deliveries: planeClients("webhooks", config, caller)(WebhookDeliveryService),
  });
  // Events and audit records wait in the outbox until NATS answers.
  return base.serve(service, {
    async connect() {
      const nc = await publisher.start();
      // This plane's part of every subject erasure (docs/subjects.md#erasure), reported to control.
      erasures = createSubjectErasureConsumer({
        plane: "platform",
        nc,
        route: eventsRoute(base.natsConfig),
        logger,
        metrics: base.registry,
        erase: (order) =>
          withTransaction(pool, (tx) => eraseSubjectAnswers(tx, order.environmentId, order.subjectId)),
        report: async (order) => {
          await control.subjects.completeSubjectErasure({
            environmentId: order.environmentId,
            subjectId: order.subjectId,
            plane: "platform",
          });
        },
      });
      erasures.start();
    },
  });
};
