import type pg from "pg";

/**
 * The last result of a multi-statement query (statements joined by `;`, sent as one simple query:
 * one round trip, no parameters), which node-postgres answers with one result per statement.
 */
export function lastResult<R extends pg.QueryResultRow>(
  answer: pg.QueryResult<R> | pg.QueryResult<R>[],
): pg.QueryResult<R> {
  return Array.isArray(answer) ? (answer.at(-1) as pg.QueryResult<R>) : answer;
}
