import type { ConnectRouter } from "@connectrpc/connect";
import { callerTable } from "@evalp/kit";
import { UsageService } from "@evalp/proto/common/v1/usage";
import { WebhookDeliveryService } from "@evalp/proto/webhooks/v1/delivery";
import { WebhookEndpointService } from "@evalp/proto/webhooks/v1/endpoint";
import { LiveEventService } from "@evalp/proto/webhooks/v1/live_events";
import { SubjectExportService } from "@evalp/proto/webhooks/v1/subject_export";
import type { Deps } from "./deps.js";
import { countUsage } from "./rpc/count-usage.js";
import { createEndpoint } from "./rpc/create-endpoint.js";
import { deleteEndpoint } from "./rpc/delete-endpoint.js";
import { exportSubject } from "./rpc/export-subject.js";
import { getDelivery } from "./rpc/get-delivery.js";
import { getEndpoint } from "./rpc/get-endpoint.js";
import { listDeliveries } from "./rpc/list-deliveries.js";
import { listEndpoints } from "./rpc/list-endpoints.js";
import { recoverEndpoint } from "./rpc/recover-endpoint.js";
import { replayDelivery } from "./rpc/replay-delivery.js";
import { rotateSecret } from "./rpc/rotate-secret.js";
import { streamEvents } from "./rpc/stream-events.js";
import { testEndpoint } from "./rpc/test-endpoint.js";
import { triggerEvent } from "./rpc/trigger-event.js";
import { updateEndpoint } from "./rpc/update-endpoint.js";

/**
 * Who may call webhooks' RPCs: the gateway every public one (live events included: it relays them
 * to listeners); control the usage it reports; the platform plane a delivery's outcome
 * (continuous evaluation).
 */
export const CALLERS = callerTable({
  gateway: [WebhookEndpointService, WebhookDeliveryService, SubjectExportService, LiveEventService],
  control: [UsageService.method.countUsage],
  platform: [WebhookDeliveryService.method.getDelivery],
});

/** Every webhooks-plane RPC, one file each under `rpc/`. */
export function routes(deps: Deps) {
  return (router: ConnectRouter) => {
    router.service(WebhookEndpointService, {
      createEndpoint: createEndpoint(deps),
      listEndpoints: listEndpoints(deps),
      getEndpoint: getEndpoint(deps),
      updateEndpoint: updateEndpoint(deps),
      deleteEndpoint: deleteEndpoint(deps),
      rotateSecret: rotateSecret(deps),
      testEndpoint: testEndpoint(deps),
      recoverEndpoint: recoverEndpoint(deps),
    });
    router.service(WebhookDeliveryService, {
      listDeliveries: listDeliveries(deps),
      getDelivery: getDelivery(deps),
      replayDelivery: replayDelivery(deps),
    });
    router.service(UsageService, { countUsage: countUsage(deps) });
    router.service(SubjectExportService, { exportSubject: exportSubject(deps) });
    router.service(LiveEventService, { streamEvents: streamEvents(deps), triggerEvent: triggerEvent(deps) });
  };
}
