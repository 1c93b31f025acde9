import type { Pool, PoolClient } from "../db/db.js";

/** Rows fetched from a cursor at a time: what one plane holds of an export in memory, at most. */
const FETCH_ROWS = 500;

/** A section of a plane's export: its key in the document, and the query of its rows (`row`, a JSON object). */
export type ExportSection = { name: string; sql: string; params: unknown[] };

/** A piece of a plane's export stream (`ExportSubjectResponse` of each plane's proto). */
export type ExportPiece = { section: string; rows: string[] };

/** `2026-11-25T10:00:00.123+00:00` (Postgres' JSON form of a UTC timestamp) as the contract writes it. */
const PG_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+00:00$/;

/** A row as exported: its timestamps in the contract's form (RFC 3339 UTC, milliseconds). */
export function exportedRow(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    typeof field === "string" && PG_UTC.test(field) ? new Date(field).toISOString() : field,
  );
}

/**
 * A plane's part of a subject export (docs/subjects.md#export): each section's rows, read in one
 * read-only snapshot through a cursor, `FETCH_ROWS` at a time, so a subject with thousands of
 * rows never sits in one process's memory at once; each section starts with a piece of its own
 * (empty when it has no rows). The transaction ends however the stream ends: read to its end,
 * failed, or abandoned by its reader (the client went away).
 */
export async function* exportSections(
  pool: Pool,
  sections: readonly ExportSection[],
): AsyncGenerator<ExportPiece> {
  const client = await pool.connect();
  let finished = false;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    for (const [index, section] of sections.entries()) {
      let first = true;
      for await (const rows of cursorRows(client, `export_${index}`, section)) {
        yield { section: section.name, rows: rows.map(exportedRow) };
        first = false;
      }
      if (first) yield { section: section.name, rows: [] };
    }
    await client.query("COMMIT");
    finished = true;
  } finally {
    if (!finished) await client.query("ROLLBACK").catch(() => {});
    client.release();
  }
}

async function* cursorRows(
  client: PoolClient,
  cursor: string,
  section: ExportSection,
): AsyncGenerator<unknown[]> {
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${section.sql}`, section.params);
  for (;;) {
    const fetched = await client.query<{ row: unknown }>(`FETCH ${FETCH_ROWS} FROM ${cursor}`);
    if (fetched.rows.length > 0) yield fetched.rows.map((found) => found.row);
    if (fetched.rows.length < FETCH_ROWS) break;
  }
  await client.query(`CLOSE ${cursor}`);
}
