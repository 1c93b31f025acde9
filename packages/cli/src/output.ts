import { type Column, renderDetails, renderTable } from "./table.js";

/** Where a command writes: its result to stdout, notes for people to stderr. */
export type Streams = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
};

/**
 * How a command shows its result. With `--json` the API's JSON itself, as one document on stdout
 * (a list as one array), and nothing else there; otherwise a table or `name  value` lines.
 */
export type Output = {
  json: boolean;
  /** A list of resources: an array in JSON, else a table of `columns`. */
  list<T>(items: readonly T[], columns: readonly Column<T>[]): void;
  /** One resource: the object in JSON, else the named `entries` of it. */
  item<T extends object>(body: T, entries: (keyof T & string)[]): void;
  /** A note for people (done, shown once…): stderr, so stdout stays the result alone. */
  note(text: string): void;
};

export function createOutput(streams: Streams, json: boolean): Output {
  return {
    json,
    list(items, columns) {
      streams.stdout(json ? document(items) : `${renderTable(items, columns)}\n`);
    },
    item(body, entries) {
      streams.stdout(json ? document(body) : `${renderDetails(entries.map((name) => [name, body[name]]))}\n`);
    },
    note(text) {
      streams.stderr(`${text}\n`);
    },
  };
}

function document(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
