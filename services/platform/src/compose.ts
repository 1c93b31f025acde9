import {
  type Config,
  createOutboxPublisher,
  type Logger,
  type ProcessOptions,
  type ServiceProcess,
  serviceBase,
} from "@evalp/kit";
import { createControlClients, createDeliveryClient } from "./control-clients.js";
import { platformService, SCHEMA } from "./server.js";

/** The platform process: its RPCs and its outbox relay. */
export async function createPlatform(
  config: Config,
  logger: Logger,
  options?: ProcessOptions,
): Promise<ServiceProcess> {
  const base = serviceBase({
    name: "platform",
    schema: SCHEMA,
    config,
    logger,
    defaultPorts: { port: 8082, opsPort: 9082 },
    process: options,
  });
  const { pool, shutdown } = base;
  const publisher = createOutboxPublisher({ name: "platform", config: base.natsConfig, pool, logger });
  // After the servers have closed (last registered runs first), the relay publishes what it holds.
  shutdown.register("outbox relay", () => publisher.stop());
  const service = platformService({
    pool,
    logger,
    config,
    control: createControlClients(config),
    deliveries: createDeliveryClient(config),
  });
  // Events and audit records wait in the outbox until NATS answers.
  return base.serve(service, {
    async connect() {
      await publisher.start();
    },
  });
}
