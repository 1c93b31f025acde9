/** One column of a table: the header shown, and how a row's cell is read. */
export type Column<T> = { header: string; value: (row: T) => unknown };

/** Columns read straight from fields of the same name, the header in capitals. */
export function fields<T extends object>(...names: (keyof T & string)[]): Column<T>[] {
  return names.map((name) => ({ header: name.toUpperCase(), value: (row: T) => row[name] }));
}

/**
 * Plain aligned columns, two spaces apart, a header row first: readable by people and still easy
 * to cut or grep. An empty list prints its header alone, so the columns are known.
 */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = [
    columns.map((column) => column.header),
    ...rows.map((row) => columns.map((c) => cell(c.value(row)))),
  ];
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => width(line[index] ?? ""))));
  return cells
    .map((line) =>
      line
        .map((text, index) =>
          index === line.length - 1 ? text : text + " ".repeat((widths[index] ?? 0) - width(text)),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** One object as `name  value` lines, the names aligned: how a single resource is shown. */
export function renderDetails(entries: readonly (readonly [string, unknown])[]): string {
  const nameWidth = Math.max(0, ...entries.map(([name]) => width(name)));
  return entries
    .map(([name, value]) => `${name}${" ".repeat(nameWidth - width(name))}  ${cell(value)}`.trimEnd())
    .join("\n");
}

/**
 * A value as one cell of text: absent as `-`, lists comma-separated, objects as compact JSON.
 * Control characters (a newline, a terminal escape in a name someone typed) are shown escaped,
 * so no value can break the layout or send commands to the terminal.
 */
export function cell(value: unknown): string {
  if (value === undefined || value === null || value === "") return "-";
  if (Array.isArray(value)) return value.length === 0 ? "-" : value.map((item) => cell(item)).join(",");
  if (typeof value === "object") return printable(JSON.stringify(value));
  return printable(String(value));
}

function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters it replaces.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => JSON.stringify(char).slice(1, -1));
}

/** Display width; the API's values are ids, names and times, so code points stand in for columns. */
function width(text: string): number {
  return [...text].length;
}
