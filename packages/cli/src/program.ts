import { createRequire } from "node:module";
import { Argument, Command, CommanderError } from "commander";
import { registerAuthCommands } from "./commands/auth.js";
import { registerControlCommands } from "./commands/control.js";
import { registerEvaluationCommands } from "./commands/evaluations.js";
import { registerListenCommands } from "./commands/listen.js";
import { registerOperateCommands } from "./commands/operate.js";
import { registerProfileCommands } from "./commands/profiles.js";
import { registerSubjectCommands } from "./commands/subjects.js";
import { endpointUrlFlags, registerWebhookCommands } from "./commands/webhooks.js";
import { completionScript, SHELLS, type Shell } from "./completion.js";
import { type Context, createContext, type GlobalOptions, type Runtime } from "./context.js";
import { asCliError, CliError, errorLine } from "./errors.js";

/** The CLI's version: its package's (beside dist/ in the published package as in the repository). */
export const VERSION = (createRequire(import.meta.url)("../package.json") as { version: string }).version;

/** An action of a command: the run's context, its positional arguments and its own options. */
export type Handler = (context: Context, args: string[], options: Record<string, unknown>) => Promise<void>;

/** Turns a handler into commander's action, building the context from the merged options. */
export type Act = (handler: Handler) => (...args: unknown[]) => Promise<void>;

/** The `evalp` program for one run: every command, writing to the runtime's streams. */
export function createProgram(runtime: Runtime): Command {
  const program = new Command("evalp")
    .description(
      "Operate an evalp platform: apps, environments, keys, webhooks, quotas, the audit trail and evaluations.",
    )
    .version(VERSION, "-V, --version", "print the CLI's version")
    .option(
      "--profile <name>",
      "the config file's profile to use (EVALP_PROFILE; default: the file's default)",
    )
    .option("--url <url>", "the API's base URL (EVALP_URL)")
    .option("--org <id>", "organization id (EVALP_ORG)")
    .option("--app <id>", "app id (EVALP_APP)")
    .option("--env <id>", "environment id (EVALP_ENV)")
    .option("--json", "print the API's JSON (one document) instead of a table")
    .showSuggestionAfterError()
    .configureHelp({ showGlobalOptions: true });

  const act: Act =
    (handler) =>
    async (...args) => {
      // commander passes the positional arguments, then the command's options, then the command.
      const command = args.at(-1) as Command;
      const positional = args.slice(0, -2).filter((arg): arg is string => typeof arg === "string");
      const context = await createContext(runtime, command.optsWithGlobals<GlobalOptions>());
      await handler(context, positional, command.opts());
    };

  registerAuthCommands(program, act);
  registerControlCommands(program, act);
  registerSubjectCommands(program, act);
  registerWebhookCommands(program, act);
  registerListenCommands(program, act);
  registerOperateCommands(program, act);
  registerEvaluationCommands(program, act);
  registerProfileCommands(program, act);
  program
    .command("completion")
    .description("print the shell completion script (bash, zsh or fish) of every command and option")
    .addArgument(new Argument("<shell>", "the shell").choices(SHELLS))
    .action((shell: Shell) => {
      // Made from this program, so it lists exactly the commands this version has.
      runtime.streams.stdout(completionScript(program, shell));
    });
  return program;
}

/**
 * Runs one command line (without `node` and the script) and answers its exit code: 0, 1 when the
 * operation failed (an API error among them), 2 when the command was used wrongly.
 */
export async function run(argv: readonly string[], runtime: Runtime): Promise<number> {
  const program = createProgram(runtime);
  for (const command of [program, ...allCommands(program)]) {
    command.exitOverride();
    command.configureOutput({
      writeOut: runtime.streams.stdout,
      writeErr: runtime.streams.stderr,
      // Commander's own messages ("error: unknown option") are written in our one-line shape below.
      outputError: () => undefined,
    });
  }
  try {
    await program.parseAsync(endpointUrlFlags(argv), { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return commanderExit(error, runtime);
    const failure = asCliError(error);
    runtime.streams.stderr(`${errorLine(failure)}\n`);
    return failure.exitCode;
  }
}

function commanderExit(error: CommanderError, runtime: Runtime): number {
  // Help and version end the run successfully; `evalp` alone shows help and is a usage error.
  if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return 0;
  if (error.code === "commander.help") return 2;
  const message = error.message.replace(/^error: /, "");
  runtime.streams.stderr(`${errorLine(new CliError("usage", message, { exitCode: 2 }))}\n`);
  return 2;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}
