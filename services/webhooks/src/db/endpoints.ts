import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid, notFound, type Queryable } from "@evalp/kit";
import { type Endpoint, EndpointSchema } from "@evalp/proto/webhooks/v1/endpoint";

export type EndpointRow = {
  id: string;
  environment_id: string;
  url: string;
  event_types: string[];
  created_at: Date;
  disabled_at: Date | null;
};

export const ENDPOINT_COLUMNS = "id, environment_id, url, event_types, created_at, disabled_at";

/** The wire form of an endpoint: never its secret. */
export function endpointMessage(row: EndpointRow): Endpoint {
  return create(EndpointSchema, {
    id: row.id,
    environmentId: row.environment_id,
    url: row.url,
    enabled: row.disabled_at === null,
    eventTypes: row.event_types,
    createdAt: timestampFromDate(row.created_at),
    disabledAt: row.disabled_at ? timestampFromDate(row.disabled_at) : undefined,
  });
}

/** An endpoint of the environment that is not deleted; 404 otherwise (optionally locked for update). */
export async function requireEndpoint(
  db: Queryable,
  environmentId: string,
  endpointId: string,
  lock = false,
): Promise<EndpointRow> {
  if (!isUuid(endpointId)) throw notFound("webhook_endpoint");
  const found = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
     WHERE id = $1 AND environment_id = $2 AND deleted_at IS NULL ${lock ? "FOR UPDATE" : ""}`,
    [endpointId, environmentId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("webhook_endpoint");
  return row;
}

/** Endpoints not deleted: the `webhook_endpoints` quota's usage (contract §5b). */
export async function countEndpoints(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ n: number }>(
    "SELECT count(*) AS n FROM webhook_endpoints WHERE environment_id = $1 AND deleted_at IS NULL",
    [environmentId],
  );
  return found.rows[0]?.n ?? 0;
}
