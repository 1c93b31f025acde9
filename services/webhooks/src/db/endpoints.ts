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

/** Ends an endpoint's failure streak (a success). */
export async function clearFailingSince(db: Queryable, endpointId: string): Promise<void> {
  await db.query(
    "UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
    [endpointId],
  );
}

/**
 * An endpoint's failure streak and whether it stopped (disabled or deleted), locked, so that a
 * disabling decided by the dispatcher and one made by a client cannot deadlock each other.
 */
export async function lockStreak(
  db: Queryable,
  endpointId: string,
): Promise<{ failing_since: Date | null; disabled: boolean } | undefined> {
  const found = await db.query<{ failing_since: Date | null; disabled: boolean }>(
    `SELECT failing_since, disabled_at IS NOT NULL OR deleted_at IS NOT NULL AS disabled
     FROM webhook_endpoints WHERE id = $1 FOR UPDATE`,
    [endpointId],
  );
  return found.rows[0];
}

/** Starts an endpoint's failure streak (the first failure after a success). */
export async function setFailingSince(db: Queryable, endpointId: string, at: Date): Promise<void> {
  await db.query("UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1", [endpointId, at]);
}

/** Enabled endpoints (not deleted) of the environments, oldest first: who hears their events. */
export async function subscribedEndpoints(
  db: Queryable,
  environmentIds: string[],
): Promise<Array<{ id: string; environment_id: string; event_types: string[]; created_at: Date }>> {
  const found = await db.query<{
    id: string;
    environment_id: string;
    event_types: string[];
    created_at: Date;
  }>(
    `SELECT id, environment_id, event_types, created_at FROM webhook_endpoints
     WHERE environment_id = ANY($1::uuid[]) AND disabled_at IS NULL AND deleted_at IS NULL
     ORDER BY created_at, id`,
    [environmentIds],
  );
  return found.rows;
}

/**
 * Sets `disabled_at` (with its reason) of an endpoint still enabled; what the event of its
 * disabling needs, or undefined when it was disabled already.
 */
export async function markDisabled(
  db: Queryable,
  endpointId: string,
  reason: string,
): Promise<{ environment_id: string; disabled_at: Date; failing_since: Date | null } | undefined> {
  const updated = await db.query<{ environment_id: string; disabled_at: Date; failing_since: Date | null }>(
    `UPDATE webhook_endpoints
     SET disabled_at = date_trunc('milliseconds', clock_timestamp()), disabled_reason = $2,
         updated_at = clock_timestamp()
     WHERE id = $1 AND disabled_at IS NULL
     RETURNING environment_id, disabled_at, failing_since`,
    [endpointId, reason],
  );
  return updated.rows[0];
}
