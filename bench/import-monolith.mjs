// B1m: `POST ENV/subjects/batch` as a Fastify + `pg` monolith would write it, registered on A1's
// monolith process (bench/servers.mjs). The same API-key authentication as A1, then the import's
// transaction as the platform's first version ran it: the environment's scope checked and its
// `active_subjects` lock taken, the limit, count and known ids read, the batch upserted, an audit
// row and an outbox row written (not announced: control's relay sweeps it a few seconds later, as
// it does any row its own process did not commit). No Idempotency-Key, no hop, no rate limit: what the import costs
// without the gateway and the RPC, the baseline of B1.
// Its statements, and A1's (bench/servers.mjs), are named, so each connection parses and plans
// them once, as the platform's hot statements are (docs/operations.md#prepared-statements): sent
// unnamed they were planned at every call (0.25 ms or so each), which made both baselines slower
// than a monolith written with care and flattered A2/A1 and B1/B1m.
import { createHash } from "node:crypto";
import { newId } from "@evalp/kit";
import pg from "pg";

const MODES = new Set(["enterprise_managed", "self_managed", "anonymous"]);

/**
 * Registers the route on `app`, with a pool of its own whose sessions work in control's schema,
 * as control's do: the trigger that counts subjects names its table unqualified.
 */
/**
 * The API key a monolith request presents, looked up as control does (its SHA-256), with its
 * reach; undefined for no key or an unknown one.
 */
export async function monolithPrincipal(pool, key) {
  if (typeof key !== "string" || !key.startsWith("evk_")) return undefined;
  const auth = await pool.query({
    name: "monolith_principal",
    text: `SELECT k.id, k.scopes, k.environment_id, e.app_id, a.organization_id, k.revoked_at IS NOT NULL AS revoked
     FROM control.api_keys k JOIN control.environments e ON e.id = k.environment_id
     JOIN control.apps a ON a.id = e.app_id WHERE k.secret_hash = $1`,
    values: [createHash("sha256").update(key).digest()],
  });
  return auth.rows[0];
}

export function registerImport(app, options) {
  const pool = new pg.Pool({ ...options, options: "-c search_path=control" });
  app.addHook("onClose", () => pool.end());
  const fail = (reply, status, code) => reply.code(status).send({ detail: { code, message: code } });
  app.post(
    "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id/subjects/batch",
    async (request, reply) => {
      const principal = await monolithPrincipal(pool, request.headers["x-api-key"]);
      if (!principal || principal.revoked) return fail(reply, 401, "unauthenticated");
      const {
        organization_id: organizationId,
        app_id: appId,
        environment_id: environmentId,
      } = request.params;
      if (principal.organization_id !== organizationId) return fail(reply, 404, "not_found");
      if (principal.app_id !== appId || principal.environment_id !== environmentId) {
        return fail(reply, 403, "forbidden");
      }
      if (!principal.scopes.includes("subjects:write")) return fail(reply, 403, "required_scope");
      const items = request.body?.items;
      const valid =
        Array.isArray(items) &&
        items.length > 0 &&
        items.length <= 100 &&
        items.every(
          (item) =>
            typeof item?.external_id === "string" &&
            item.external_id.length > 0 &&
            MODES.has(item.identity_mode) &&
            typeof item.profile === "object" &&
            item.profile !== null,
        );
      if (!valid) return fail(reply, 422, "validation_error");

      const batchId = newId();
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const scope = await client.query({
          name: "monolith_import_scope",
          text: `SELECT pg_advisory_xact_lock(hashtextextended($4, 0)) FROM control.environments e
           JOIN control.apps a ON a.id = e.app_id WHERE e.id = $1 AND a.id = $2 AND a.organization_id = $3`,
          values: [environmentId, appId, organizationId, `quota:${environmentId}:active_subjects`],
        });
        if (scope.rowCount === 0) {
          await client.query("ROLLBACK");
          return fail(reply, 404, "not_found");
        }
        const state = await client.query({
          name: "monolith_import_state",
          text: `SELECT q.active_subjects AS limit,
                  (SELECT COALESCE(sum(subjects), 0) FROM control.subject_count_shards
                   WHERE environment_id = $1) AS subjects,
                  COALESCE((SELECT json_object_agg(external_id, id) FROM control.subjects
                            WHERE environment_id = $1 AND external_id = ANY($2)), '{}') AS known
           FROM control.quotas q
           WHERE q.environment_id = $1`,
          values: [environmentId, items.map((item) => item.external_id)],
        });
        const { limit, subjects, known } = state.rows[0];
        let active = Number(subjects);
        const seen = new Set();
        const receipts = [];
        const updates = [];
        const inserts = [];
        for (const [index, item] of items.entries()) {
          if (seen.has(item.external_id)) {
            receipts.push({ item_index: index, subject_id: "", error_code: "duplicate_in_batch" });
            continue;
          }
          seen.add(item.external_id);
          const existing = known[item.external_id];
          if (existing) {
            updates.push({ id: existing, profile: item.profile, mode: item.identity_mode });
            receipts.push({ item_index: index, subject_id: existing, error_code: "" });
          } else if (active + 1 > limit) {
            receipts.push({ item_index: index, subject_id: "", error_code: "quota_exceeded" });
          } else {
            const id = newId();
            inserts.push({
              id,
              externalId: item.external_id,
              profile: item.profile,
              mode: item.identity_mode,
            });
            active += 1;
            receipts.push({ item_index: index, subject_id: id, error_code: "" });
          }
        }
        await client.query({
          name: "monolith_import_write",
          text: `WITH updated AS (
             UPDATE control.subjects s SET profile = u.profile, identity_mode = u.mode, updated_at = clock_timestamp()
             FROM unnest($1::uuid[], $2::jsonb[], $3::text[]) AS u (id, profile, mode) WHERE s.id = u.id
           )
           INSERT INTO control.subjects (id, environment_id, external_id, identity_mode, profile)
           SELECT i.id, $4, i.external_id, i.mode, i.profile
           FROM unnest($5::uuid[], $6::text[], $7::text[], $8::jsonb[]) AS i (id, external_id, mode, profile)`,
          values: [
            updates.map((u) => u.id),
            updates.map((u) => JSON.stringify(u.profile)),
            updates.map((u) => u.mode),
            environmentId,
            inserts.map((i) => i.id),
            inserts.map((i) => i.externalId),
            inserts.map((i) => i.mode),
            inserts.map((i) => JSON.stringify(i.profile)),
          ],
        });
        const imported = receipts.filter((receipt) => receipt.subject_id !== "");
        const summary = {
          batch_id: batchId,
          items: items.length,
          imported: imported.length,
          failed: receipts.length - imported.length,
        };
        await client.query({
          name: "monolith_import_audit",
          text: `INSERT INTO control.audit_events (id, organization_id, app_id, environment_id, actor_kind, actor_id,
             action, resource_type, resource_id, request_id, metadata)
           VALUES ($1, $2, $3, $4, 'api_key', $5, 'subjects.imported', 'subject_batch', $6, $7, $8)`,
          values: [newId(), organizationId, appId, environmentId, principal.id, batchId, request.id, summary],
        });
        const event = {
          id: newId(),
          type: "subject.imported",
          timestamp: new Date().toISOString(),
          environment_id: environmentId,
          data: { ...summary, subject_ids: imported.map((receipt) => receipt.subject_id) },
        };
        await client.query({
          name: "monolith_import_outbox",
          text: `INSERT INTO control.outbox (id, event_type, subject, environment_id, payload, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          values: [
            event.id,
            event.type,
            `events.${environmentId}.${event.type}`,
            environmentId,
            JSON.stringify(event),
            event.timestamp,
          ],
        });
        await client.query("COMMIT");
        return { batch_id: batchId, idempotent_replay: false, receipts };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  );
}
