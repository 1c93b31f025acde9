import type { HandlerContext } from "@connectrpc/connect";
import { type Queryable, requestContext, writeAuditRecord } from "@evalp/kit";
import type { EnvironmentRef } from "@evalp/proto/control/v1/api_key";

/**
 * Audits a webhooks-plane mutation in the transaction that makes it (the record reaches the
 * control plane's audit trail through this plane's outbox). Metadata never holds a secret.
 */
export function auditWebhooks(
  tx: Queryable,
  ctx: HandlerContext,
  environment: EnvironmentRef | undefined,
  entry: { action: string; resourceType: string; resourceId: string; metadata?: Record<string, unknown> },
): Promise<void> {
  return writeAuditRecord(tx, requestContext(ctx.values), {
    organizationId: environment?.organizationId ?? "",
    appId: environment?.appId,
    environmentId: environment?.environmentId,
    ...entry,
  });
}
