import type { Command } from "commander";
import { readConfigDocument, writeConfigDocument } from "../config-file.js";
import { usageError } from "../errors.js";
import type { Act } from "../program.js";
import { fields } from "../table.js";

/** A profile as `profiles list` shows it: never its token or key, only which kind it holds. */
type ProfileRow = { name: string; default: boolean; url: string; credential: string; org: string };

/** `profiles list` and `profiles use`: the named profiles of the config file. */
export function registerProfileCommands(program: Command, act: Act): void {
  const profiles = program
    .command("profiles")
    .description("the config file's named profiles (--profile / EVALP_PROFILE picks one)");
  profiles
    .command("list")
    .description("list the profiles, the default one marked (never their credentials)")
    .action(
      act(async (context) => {
        const document = await readConfigDocument(context.configPath);
        const rows: ProfileRow[] = Object.entries(document.profiles).map(([name, profile]) => ({
          name,
          default: name === (document.default_profile ?? "default"),
          url: profile.url ?? "",
          credential: profile.api_key ? "api_key" : profile.token ? "token" : "",
          org: profile.org ?? "",
        }));
        context.output.list(rows, fields<ProfileRow>("name", "default", "url", "credential", "org"));
      }),
    );
  profiles
    .command("use")
    .description("make a profile the default one")
    .argument("<name>", "the profile's name")
    .action(
      act(async (context, [name = ""]) => {
        const document = await readConfigDocument(context.configPath);
        if (!document.profiles[name]) {
          const known = Object.keys(document.profiles).join(", ") || "none";
          throw usageError(`no profile "${name}" in ${context.configPath} (known: ${known})`);
        }
        document.default_profile = name;
        await writeConfigDocument(context.configPath, document);
        context.output.note(`Profile "${name}" is the default.`);
      }),
    );
}
