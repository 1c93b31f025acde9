import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient } from "@connectrpc/connect";
import type { Config } from "../config/config.js";
import { createServiceTransport, type ServiceCaller } from "./connect-client.js";

/** The planes, by name: the processes that serve the RPCs the gateway and the other planes call. */
export const PLANES = ["control", "platform", "interview", "webhooks"] as const;
export type Plane = (typeof PLANES)[number];

/** The setting that holds each plane's address (docs/configuration.md). */
const PLANE_URL = {
  control: "CONTROL_URL",
  platform: "PLATFORM_URL",
  interview: "INTERVIEW_URL",
  webhooks: "WEBHOOKS_URL",
} as const satisfies Record<Plane, keyof Config>;

/** What reaching plane `P` needs of the configuration: its address and the calls' deadline. */
export type PlaneClientsConfig<P extends Plane> = Pick<Config, (typeof PLANE_URL)[P] | "UPSTREAM_TIMEOUT_MS">;

/** Makes a typed client of one of the plane's services. */
export type PlaneClients = <S extends DescService>(service: S) => Client<S>;

/**
 * The clients of one plane, as `caller`: every client made by the answer shares one transport,
 * so all the services of a plane go through one HTTP/2 connection per replica of it
 * (`createServiceTransport`). The address is read at the first call, so that planes that call
 * each other may start in any order.
 */
export function planeClients<P extends Plane>(
  plane: P,
  config: PlaneClientsConfig<P>,
  caller: ServiceCaller,
): PlaneClients {
  const address = () => config[PLANE_URL[plane]];
  const transport = createServiceTransport(plane, address, config.UPSTREAM_TIMEOUT_MS, caller);
  return (service) => createClient(service, transport);
}
