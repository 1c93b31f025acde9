// What each case asks of Postgres, statement by statement: calls, executions' and planning's time
// per unit (request, delivery), from `pg_stat_statements` when the server has it loaded
// (CONTRIBUTING.md, "Which statements a case runs"). Times there are wall time, which on a
// saturated machine includes waiting for a core and for locks; the counts are exact, and are what
// shows a statement run more often than the design says (a function called per row, a plan
// made per call).
import pg from "pg";

/** The statements kept per case and round: the dearest by execution and planning time. */
const KEPT = 8;

/**
 * A reader of the server's `pg_stat_statements` for the run's database, or null when the view is
 * not there (the extension not preloaded by the server, or not created in its `postgres` database).
 */
export async function statementsOf(adminUrl, databaseName) {
  const client = new pg.Client({ connectionString: adminUrl.toString() });
  await client.connect();
  const usable = await client
    .query("SELECT 1 FROM pg_stat_statements LIMIT 1")
    .then(() => true)
    .catch(() => false);
  if (!usable) {
    await client.end();
    return null;
  }
  const snapshot = async () => {
    const { rows } = await client.query(
      `SELECT s.queryid::text AS id, s.userid::regrole::text AS role, s.calls::float8 AS calls,
              s.plans::float8 AS plans, s.total_exec_time AS exec_ms, s.total_plan_time AS plan_ms,
              left(regexp_replace(s.query, '\\s+', ' ', 'g'), 160) AS query
       FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
       WHERE d.datname = $1`,
      [databaseName],
    );
    return new Map(rows.map((row) => [`${row.role} ${row.id}`, row]));
  };
  return {
    snapshot,
    /** Per unit, the statements run between `before` and now, dearest first. */
    async since(before, units) {
      const after = await snapshot();
      const used = [];
      for (const [key, now] of after) {
        const then = before.get(key) ?? { calls: 0, plans: 0, exec_ms: 0, plan_ms: 0 };
        const calls = now.calls - then.calls;
        if (calls <= 0 || !(units > 0)) continue;
        const us = (now.exec_ms - then.exec_ms + now.plan_ms - then.plan_ms) * 1000;
        // The other planes' pollers, which run whatever the case: below 1 call per 1,000 units and 1 µs per unit.
        if (calls / units < 0.001 && us / units < 1) continue;
        used.push({
          role: now.role,
          callsPer: calls / units,
          plansPer: (now.plans - then.plans) / units,
          execUsPer: ((now.exec_ms - then.exec_ms) * 1000) / units,
          planUsPer: ((now.plan_ms - then.plan_ms) * 1000) / units,
          query: now.query,
        });
      }
      return used.sort((a, b) => b.execUsPer + b.planUsPer - (a.execUsPer + a.planUsPer)).slice(0, KEPT);
    },
    close: () => client.end(),
  };
}

/** The statements of each case's last round, as a table per case. */
export function printStatements(cases, rounds) {
  const last = rounds.at(-1)?.measured ?? {};
  for (const c of cases) {
    const used = last[c.id]?.statements;
    if (!used?.length) continue;
    console.log(
      `\n${c.id}: statements per 1,000 ${c.unit ?? "requests"} (calls, plans) and per one (µs of wall time), last round`,
    );
    console.log("   calls │    plans │ exec µs │ plan µs │ role            │ statement");
    for (const s of used) {
      console.log(
        [
          (s.callsPer * 1000).toFixed(1).padStart(8),
          (s.plansPer * 1000).toFixed(1).padStart(8),
          s.execUsPer.toFixed(0).padStart(7),
          s.planUsPer.toFixed(0).padStart(7),
          s.role.padEnd(15).slice(0, 15),
          s.query,
        ].join(" │ "),
      );
    }
  }
}
