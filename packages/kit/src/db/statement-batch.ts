import { createRequire } from "node:module";
import pg from "pg";

/*
 * Several statements in one round trip, each with its own parameters: the extended protocol's
 * messages of every statement (Parse where the connection has not prepared it yet, Bind, Describe,
 * Execute) go out in one write, followed by a single Sync, and Postgres answers them all in one.
 * A statement that fails ends the batch: Postgres skips every later message up to the Sync, so a
 * COMMIT sent after a failed statement never runs (the transaction is left aborted, for the caller
 * to roll back). node-postgres sends one statement per Sync, and a multi-statement simple query
 * takes no parameters (its values would be written in as literals, and planned on every run).
 */

/** node-postgres's mapping of a JS value to a parameter, as its own queries use it. */
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
  prepareValue: (value: unknown) => unknown;
};

/** The parts of node-postgres's connection a batch drives (not in its published types). */
type Connection = {
  stream: { cork(): void; uncork(): void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name?: string }): void;
  bind(message: { statement?: string; values: unknown[]; valueMapper: (value: unknown) => unknown }): void;
  describe(message: { type: "P"; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  flush(): void;
  sync(): void;
  on(event: "parseComplete", listener: () => void): void;
  off(event: "parseComplete", listener: () => void): void;
};

type Statement = pg.QueryConfig;
type Result = pg.QueryResult & {
  addFields(fields: unknown[]): void;
  parseRow(values: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
  addCommandComplete(message: unknown): void;
};
const ResultOf = (pg as unknown as { Result: new () => Result }).Result;

/**
 * What node-postgres calls on the query it is running (its `Submittable`): `submit` once, then one
 * handler per message of the answer, until `handleReadyForQuery` (the batch's Sync answered) or
 * `handleError` (a statement failed; the client then waits for the Sync's answer on its own).
 */
class StatementBatch {
  readonly results: Result[];
  private current = 0;
  /**
   * Every Parse this batch sent, in order (its name; null for the unnamed statement, which is
   * answered a ParseComplete too): each ParseComplete settles the next.
   */
  private readonly parsing: Array<string | null> = [];
  private connection: Connection | undefined;
  /** A row that could not be read (a type's parser threw): the batch fails with it once answered. */
  private unreadable: Error | undefined;
  private readonly onParsed = () => {
    const name = this.parsing.shift();
    if (!name || !this.connection) return;
    this.connection.parsedStatements[name] = this.connection.submittedNamedStatements[name] ?? "";
    delete this.connection.submittedNamedStatements[name];
  };

  constructor(
    private readonly statements: Statement[],
    private readonly done: (error: Error | undefined, results: Result[]) => void,
    /**
     * Called with the batch's results once its last statement has run, before its Sync is
     * answered: a Flush goes before the Sync, so that Postgres sends them before it commits the
     * implicit transaction the batch ran in.
     */
    private readonly ran?: (results: Result[]) => void,
  ) {
    this.results = statements.map(() => new ResultOf());
  }

  /** Sends the batch; an Error (nothing sent) when a name is reused for another text. */
  submit(connection: Connection): Error | null {
    for (const { name, text } of this.statements) {
      const known = name
        ? (connection.parsedStatements[name] ?? connection.submittedNamedStatements[name])
        : undefined;
      if (known !== undefined && known !== text) return new Error(`prepared statement ${name} has two texts`);
    }
    this.connection = connection;
    connection.on("parseComplete", this.onParsed);
    connection.stream.cork();
    try {
      for (const { name, text, values } of this.statements) {
        if (!name) {
          connection.parse({ text });
          this.parsing.push(null);
        } else if (
          connection.parsedStatements[name] === undefined &&
          connection.submittedNamedStatements[name] === undefined
        ) {
          connection.parse({ text, name });
          connection.submittedNamedStatements[name] = text;
          this.parsing.push(name);
        }
        connection.bind({ statement: name ?? "", values: values ?? [], valueMapper: prepareValue });
        connection.describe({ type: "P", name: "" });
        connection.execute({ portal: "", rows: 0 });
      }
      if (this.ran) connection.flush();
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return null;
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.results[this.current]?.addFields(message.fields);
  }

  /** Thrown here, a parser's error would escape into the socket's data handler, as node-postgres's own queries avoid. */
  handleDataRow(message: { fields: unknown[] }): void {
    const result = this.results[this.current];
    if (!result || this.unreadable) return;
    try {
      result.addRow(result.parseRow(message.fields));
    } catch (error) {
      this.unreadable = error instanceof Error ? error : new Error(String(error));
    }
  }

  handleCommandComplete(message: unknown): void {
    this.results[this.current]?.addCommandComplete(message);
    this.current += 1;
    if (this.current === this.statements.length && !this.unreadable) this.ran?.(this.results);
  }

  handleEmptyQuery(): void {
    this.current += 1;
  }

  handleReadyForQuery(): void {
    this.end(this.unreadable);
  }

  handleError(error: Error): void {
    this.end(error);
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {}

  handleCopyData(): void {}

  private end(error: Error | undefined): void {
    const connection = this.connection;
    if (connection) {
      connection.off("parseComplete", this.onParsed);
      // A Parse the failure skipped prepared nothing: the next use of its name parses it again.
      for (const name of this.parsing) if (name) delete connection.submittedNamedStatements[name];
    }
    this.parsing.length = 0;
    this.done(error, this.results);
  }
}

/**
 * Runs `statements` on `client` in one round trip, in order, and answers their results; rejects
 * with the first failure, after which none of the later statements ran. Named statements are
 * prepared once per connection, as node-postgres prepares them (they share its bookkeeping).
 */
export function runBatch(client: pg.ClientBase, statements: Statement[]): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    const batch = new StatementBatch(statements, (error, results) =>
      error ? reject(error) : resolve(results),
    );
    client.query(batch as unknown as pg.Submittable);
  });
}

/** A statement's result answered before its transaction commits, and the commit's outcome. */
export type RunBeforeCommit = {
  /** The statement's result, once it has run; rejects if it failed. */
  result: Promise<pg.QueryResult>;
  /** Resolves once its transaction has committed (durably); rejects if the statement or the commit failed. */
  committed: Promise<void>;
};

/**
 * Runs one statement on `client`, outside any transaction block, in the implicit transaction of
 * its own Sync, and answers its result as soon as it has run, while Postgres commits it (a Flush
 * before the Sync): what follows from the result can start while the commit is flushed to disk,
 * and to a synchronous replica. Nothing the result names is durable, or seen by other sessions,
 * before `committed` resolves.
 */
export function runBeforeCommit(client: pg.ClientBase, statement: Statement): RunBeforeCommit {
  let answer: ((result: pg.QueryResult) => void) | undefined;
  let refuse: ((error: Error) => void) | undefined;
  const result = new Promise<pg.QueryResult>((resolve, reject) => {
    answer = resolve;
    refuse = reject;
  });
  const committed = new Promise<void>((resolve, reject) => {
    const batch = new StatementBatch(
      [statement],
      (error) => {
        if (error) {
          // A no-op once the result was answered: the commit failed after it.
          refuse?.(error);
          reject(error);
        } else resolve();
      },
      (results) => answer?.(results[0] as pg.QueryResult),
    );
    client.query(batch as unknown as pg.Submittable);
  });
  // The result's consumer may not wait for the commit: its failure is reported there.
  committed.catch(() => {});
  return { result, committed };
}
