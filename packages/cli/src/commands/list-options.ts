import type { Command } from "commander";
import { positiveInteger } from "../parse.js";

/** A list command's `--limit`: without it every page is fetched. */
export function listLimit(command: Command): Command {
  return command.option(
    "--limit <n>",
    "at most this many items, newest first (default: all)",
    positiveInteger,
  );
}

/** The `--limit` of a list command, when given. */
export function limitOf(options: Record<string, unknown>): number | undefined {
  return typeof options.limit === "number" ? options.limit : undefined;
}

/** The page size to ask for: no bigger than needed for `limit`, within the API's 1-100. */
export function pageSize(limit: number | undefined): { limit?: number } {
  return limit === undefined ? { limit: 100 } : { limit: Math.min(limit, 100) };
}

/** The items of a paged list, every one or the first `limit`; later pages are not asked for. */
export async function collect<T>(items: AsyncIterable<T>, limit: number | undefined): Promise<T[]> {
  const collected: T[] = [];
  if (limit === 0) return collected;
  for await (const item of items) {
    collected.push(item);
    if (collected.length === limit) break;
  }
  return collected;
}
