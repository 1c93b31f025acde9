import {
  type ComposeProcess,
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
  const { pool } = base;
  base.retain(platformRetention(config));
  const publisher = base.outboxRelay();
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
  const erasures = base.subjectErasures("platform", {
    erase: (order) =>
      withTransaction(pool, (tx) => eraseSubjectAnswers(tx, order.environmentId, order.subjectId)),
    control: control.subjects,
  });
  // Events and audit records wait in the outbox until NATS answers.
  return base.serve(service, {
    async connect() {
      const nc = await publisher.start();
      // This plane's part of every subject erasure (docs/subjects.md#erasure), reported to control.
      erasures.start(nc);
    },
  });
};
