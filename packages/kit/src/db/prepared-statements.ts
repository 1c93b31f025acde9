import type pg from "pg";

/** Each name's text: a name is prepared once per connection, so it must never mean two statements. */
const texts = new Map<string, string>();

/**
 * A statement of a hot path, named so that node-postgres prepares it once per connection (Parse
 * and its plan kept by the server) and afterwards sends only its values (Bind, Execute): no
 * parsing and, for its first five runs' custom plans and then a generic one, far less planning.
 * Through PgBouncer in transaction mode the server connection changes between transactions, so
 * PgBouncer must track protocol-level prepared statements itself (`max_prepared_statements` above
 * 0, PgBouncer 1.21 or later; docs/operations.md#prepared-statements).
 * `name` is unique in the process: a second text under one name is a bug, thrown at load.
 */
export function preparedStatement(name: string, text: string): (values: unknown[]) => pg.QueryConfig {
  const known = texts.get(name);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${name} has two texts`);
  texts.set(name, text);
  return (values) => ({ name, text, values });
}
