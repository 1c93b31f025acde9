import {
  type Config,
  createSealer,
  type Queryable,
  requireWebhookSecretsKeys,
  type Sealer,
} from "@evalp/kit";

/**
 * Endpoint secrets are stored sealed (docs/webhooks.md#secrets-at-rest): AES-256-GCM under a key
 * derived from WEBHOOK_SECRETS_KEYS (kit `createSealer`), the key id in a column beside the
 * sealed value, the endpoint's id authenticated with it (so a sealed secret copied to another
 * endpoint does not open). They are opened only to sign an attempt.
 *
 * Queries hand a secret around as an envelope, `<kid>:<sealed>`, opened at the attempt. A row
 * written before secrets were sealed, and not re-sealed yet (`resealSecrets`), gives `:<plain>`:
 * a key id is never empty.
 */
export type SecretEnvelope = string & { readonly __brand: "SecretEnvelope" };

/** Seals an endpoint's secret for its columns, and opens what queries return. */
export type SecretSealer = {
  readonly kid: string;
  seal(endpointId: string, secret: string): { sealed: string; kid: string };
  /** The secret, or null when no key held opens it (a key dropped from WEBHOOK_SECRETS_KEYS too soon). */
  open(endpointId: string, envelope: SecretEnvelope): string | null;
};

const PURPOSE = "webhook endpoint secrets";

/** Secrets kept opened per sealer; past it the whole set is dropped and opened again as needed. */
const MAX_OPENED = 10_000;

export function createSecretSealer(config: Pick<Config, "WEBHOOK_SECRETS_KEYS">): SecretSealer {
  const sealer: Sealer = createSealer(PURPOSE, requireWebhookSecretsKeys(config));
  // Every attempt opens its endpoint's secret, and the same envelope comes back with each of the
  // endpoint's deliveries: an AES-GCM open per attempt was some 5 % of the plane's CPU. The set is
  // keyed by endpoint and envelope, exactly what was opened and verified, so a sealed value read
  // for another endpoint, or changed, is opened (and refused) as before. The signer keeps the
  // opened secrets' keys in memory alike (sign.ts).
  const opened = new Map<string, string>();
  return {
    kid: sealer.kid,
    seal: (endpointId, secret) => ({ sealed: sealer.seal(secret, endpointId), kid: sealer.kid }),
    open(endpointId, envelope) {
      const at = envelope.indexOf(":");
      if (at === 0) return envelope.slice(1);
      const key = `${endpointId} ${envelope}`;
      const known = opened.get(key);
      if (known !== undefined) return known;
      const secret = sealer.open(envelope.slice(at + 1), envelope.slice(0, at), endpointId);
      if (secret !== null) {
        if (opened.size >= MAX_OPENED) opened.clear();
        opened.set(key, secret);
      }
      return secret;
    },
  };
}

/**
 * The SQL of an endpoint's secret envelopes, for the endpoint row `alias`: `secret`, and
 * `previous_secret` while it has not expired (a rotation's previous secret stops signing at
 * `previous_secret_expires_at`, before the sweep erases it). A plain value wins over a sealed
 * one: this release clears the plain column whenever it writes, so a plain value beside a sealed
 * one was written later, by a process of the previous release during a rolling update.
 */
export function secretEnvelopesSql(alias: string): string {
  return `COALESCE(':' || ${alias}.secret, ${alias}.secret_key_id || ':' || ${alias}.secret_sealed) AS secret,
       CASE WHEN ${alias}.previous_secret_expires_at > now() THEN
         COALESCE(':' || ${alias}.previous_secret, ${alias}.previous_secret_key_id || ':' || ${alias}.previous_secret_sealed)
       END AS previous_secret`;
}

/** Rows sealed at most per batch of the re-seal at start. */
const RESEAL_BATCH = 500;

/**
 * One batch of the re-seal: at most `limit` rows whose secrets are not sealed under the current
 * key (written before secrets were sealed, their plain columns then cleared, or sealed under an
 * older key of WEBHOOK_SECRETS_KEYS), skipping `skip` and rows other transactions hold (a
 * rotation writes them under the current key anyway). A row whose secret no key opens is left
 * as it is and added to `skip`. Resolves with the rows sealed and those looked at.
 */
export async function resealBatch(
  db: Queryable,
  sealer: SecretSealer,
  limit: number,
  skip: Set<string>,
): Promise<{ resealed: number; seen: number }> {
  const found = await db.query<{
    id: string;
    secret: SecretEnvelope;
    previous_secret: SecretEnvelope | null;
  }>(
    `SELECT e.id, ${secretEnvelopesSql("e")} FROM webhook_endpoints e
     WHERE (e.secret IS NOT NULL OR e.previous_secret IS NOT NULL
            OR e.secret_key_id IS DISTINCT FROM $1
            OR (e.previous_secret_key_id IS NOT NULL AND e.previous_secret_key_id <> $1))
       AND NOT (e.id = ANY($2::uuid[]))
     ORDER BY e.id LIMIT $3 FOR UPDATE SKIP LOCKED`,
    [sealer.kid, [...skip], limit],
  );
  let resealed = 0;
  for (const row of found.rows) {
    const secret = sealer.open(row.id, row.secret);
    const previous = row.previous_secret === null ? null : sealer.open(row.id, row.previous_secret);
    if (secret === null || (row.previous_secret !== null && previous === null)) {
      skip.add(row.id);
      continue;
    }
    const current = sealer.seal(row.id, secret);
    const before = previous === null ? null : sealer.seal(row.id, previous);
    // An expired previous secret (not selected above) is not carried over: erased as the sweep would.
    await db.query(
      `UPDATE webhook_endpoints
       SET secret = NULL, secret_sealed = $2, secret_key_id = $3,
           previous_secret = NULL, previous_secret_sealed = $4,
           previous_secret_key_id = CASE WHEN $4::text IS NULL THEN NULL ELSE $3 END,
           previous_secret_expires_at = CASE WHEN $4::text IS NULL THEN NULL ELSE previous_secret_expires_at END
       WHERE id = $1`,
      [row.id, current.sealed, current.kid, before?.sealed ?? null],
    );
    resealed += 1;
  }
  return { resealed, seen: found.rows.length };
}

/**
 * The re-seal a webhooks process runs when it starts (and retention repeats, `webhooksRetention`):
 * every row not sealed under the current key, in batches, each a transaction holding the schema's
 * re-seal lock (`pg_try_advisory_xact_lock`: a replica that does not get it leaves the work to
 * the one that has it). Resolves with the rows re-sealed and those no key opens.
 */
export async function resealSecrets(
  pool: { connect(): Promise<Queryable & { release(): void }> },
  sealer: SecretSealer,
): Promise<{ resealed: number; unopened: number; skipped: boolean }> {
  let resealed = 0;
  const unopened = new Set<string>();
  for (;;) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      if (!(await resealTurn(client))) {
        await client.query("ROLLBACK");
        return { resealed, unopened: unopened.size, skipped: true };
      }
      const batch = await resealBatch(client, sealer, RESEAL_BATCH, unopened);
      await client.query("COMMIT");
      resealed += batch.resealed;
      if (batch.seen < RESEAL_BATCH) return { resealed, unopened: unopened.size, skipped: false };
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

/** Takes the schema's re-seal lock for the transaction, if no other holds it. */
export async function resealTurn(db: Queryable): Promise<boolean> {
  const turn = await db.query<{ ok: boolean }>(
    "SELECT pg_try_advisory_xact_lock(hashtextextended('evalp-webhook-reseal:' || current_schema(), 0)) AS ok",
  );
  return turn.rows[0]?.ok === true;
}
