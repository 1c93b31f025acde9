import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid, notFound, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
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

/** Endpoints not deleted: the `webhook_endpoints` quota's usage (docs/webhooks.md). */
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

/** A secret sealed for its endpoint (`SecretSealer.seal`): what its columns store. */
export type SealedSecret = { sealed: string; kid: string };

/** Inserts an endpoint, disabled at once (by request) unless `enabled`; its secret sealed. */
export async function insertEndpoint(
  db: Queryable,
  endpoint: {
    id: string;
    environmentId: string;
    url: string;
    eventTypes: string[];
    secret: SealedSecret;
    enabled: boolean;
  },
): Promise<EndpointRow> {
  const inserted = await db.query<EndpointRow>(
    `INSERT INTO webhook_endpoints
       (id, environment_id, url, event_types, secret_sealed, secret_key_id, disabled_at, disabled_reason)
     VALUES ($1, $2, $3, $4, $5, $7,
             CASE WHEN $6 THEN NULL ELSE date_trunc('milliseconds', clock_timestamp()) END,
             CASE WHEN $6 THEN NULL ELSE 'requested' END)
     RETURNING ${ENDPOINT_COLUMNS}`,
    [
      endpoint.id,
      endpoint.environmentId,
      endpoint.url,
      endpoint.eventTypes,
      endpoint.secret.sealed,
      endpoint.enabled,
      endpoint.secret.kid,
    ],
  );
  return inserted.rows[0] as EndpointRow;
}

/** Marks an endpoint deleted (and disabled, if it was not). */
export async function markDeleted(db: Queryable, endpointId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints
     SET deleted_at = clock_timestamp(), disabled_at = COALESCE(disabled_at, date_trunc('milliseconds', clock_timestamp())),
         updated_at = clock_timestamp()
     WHERE id = $1`,
    [endpointId],
  );
}

/** A page of the environment's endpoints that are not deleted, newest first. */
export async function listEndpointRows(
  db: Queryable,
  environmentId: string,
  page: PageRequest | undefined,
): Promise<EndpointRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
     WHERE environment_id = $1 AND deleted_at IS NULL AND ${clause.where} ${clause.tail}`,
    [environmentId, ...clause.params],
  );
  return found.rows;
}

/**
 * A new secret, sealed; the one it replaces keeps signing for `overlapMs`, in whichever form it
 * was stored (an older previous one is dropped).
 */
export async function rotateEndpointSecret(
  db: Queryable,
  endpointId: string,
  secret: SealedSecret,
  overlapMs: number,
): Promise<EndpointRow> {
  const updated = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
     SET previous_secret = secret, previous_secret_sealed = secret_sealed,
         previous_secret_key_id = secret_key_id,
         secret = NULL, secret_sealed = $2, secret_key_id = $4,
         previous_secret_expires_at = clock_timestamp() + make_interval(secs => $3::double precision / 1000),
         updated_at = clock_timestamp()
     WHERE id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
    [endpointId, secret.sealed, overlapMs, secret.kid],
  );
  return updated.rows[0] as EndpointRow;
}

/** Changes an endpoint's URL (when given) and event types (when `setEventTypes`). */
export async function updateEndpointTarget(
  db: Queryable,
  endpointId: string,
  change: { url: string | null; setEventTypes: boolean; eventTypes: string[] },
): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints
     SET url = COALESCE($2, url), event_types = CASE WHEN $3 THEN $4::text[] ELSE event_types END,
         updated_at = clock_timestamp()
     WHERE id = $1`,
    [endpointId, change.url, change.setEventTypes, change.eventTypes],
  );
}

/** Enables a disabled endpoint again, ending its failure streak. */
export async function markEnabled(db: Queryable, endpointId: string): Promise<void> {
  await db.query(
    `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
       updated_at = clock_timestamp()
     WHERE id = $1 AND disabled_at IS NOT NULL`,
    [endpointId],
  );
}

/** An endpoint as it stands (deleted or not). */
export async function endpointRow(db: Queryable, endpointId: string): Promise<EndpointRow> {
  const found = await db.query<EndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
    [endpointId],
  );
  return found.rows[0] as EndpointRow;
}
