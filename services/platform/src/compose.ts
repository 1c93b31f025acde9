import { type ComposeProcess, createOutboxPublisher, type ServiceProcess, serviceBase } from "@evalp/kit";
import { createControlClients, createDeliveryClient } from "./control-clients.js";
import { platformRetention } from "./db/retention.js";
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
  const service = platformService({
    pool,
    logger,
    config,
    control: createControlClients(config, base.registry),
    deliveries: createDeliveryClient(config, base.registry),
  });
  // Events and audit records wait in the outbox until NATS answers.
  return base.serve(service, {
    async connect() {
      await publisher.start();
    },
  });
};
