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
