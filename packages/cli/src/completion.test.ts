import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { commandTree, completionScript } from "./completion.js";
import { createProgram } from "./program.js";

const program = () =>
  createProgram({
    env: {},
    streams: { stdout: () => undefined, stderr: () => undefined },
    readStdin: async () => "",
    connect: () => {
      throw new Error("no requests here");
    },
  });

/** What bash completes for the words typed so far (the last one being completed). */
function bashCompletes(words: string[]): string[] {
  const script = completionScript(program(), "bash");
  const driver = `${script}
COMP_WORDS=(${words.map((word) => `'${word}'`).join(" ")})
COMP_CWORD=${words.length - 1}
_evalp_completion
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync("bash", ["--norc", "--noprofile", "-c", driver], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean);
}

describe("shell completion", () => {
  it("is made from the program: every command and subcommand, with its options", () => {
    const tree = commandTree(program());
    const root = tree.find((node) => node.path === "");
    expect(root?.subcommands.map((sub) => sub.name)).toEqual(
      expect.arrayContaining(["login", "apps", "webhooks", "profiles", "completion"]),
    );
    expect(root?.options.map((option) => option.flag)).toEqual(
      expect.arrayContaining(["--profile", "--url", "--json", "--version"]),
    );
    const create = tree.find((node) => node.path === "webhooks create");
    expect(create?.options.map((option) => option.flag)).toEqual(
      expect.arrayContaining(["--endpoint-url", "--event-type", "--secret"]),
    );
    // Aliases complete as well.
    expect(tree.some((node) => node.path === "envs list")).toBe(true);
  });

  it("in bash, completes commands, then subcommands, then the command's and the global options", () => {
    expect(bashCompletes(["evalp", "web"])).toEqual(["webhooks"]);
    expect(bashCompletes(["evalp", "webhooks", ""])).toEqual(
      expect.arrayContaining(["list", "create", "test", "rotate", "recover"]),
    );
    expect(bashCompletes(["evalp", "--json", "webhooks", "create", "--ev"])).toEqual(["--event-type"]);
    expect(bashCompletes(["evalp", "webhooks", "create", "--pro"])).toEqual(["--profile"]);
  });

  it("quotes descriptions so that each shell reads the script whole", () => {
    const zsh = completionScript(program(), "zsh");
    expect(zsh).toMatch(/^#compdef evalp/);
    expect(zsh).toContain("'webhooks create')");
    const fish = completionScript(program(), "fish");
    expect(fish).toContain(`complete -c evalp -n "__evalp_at 'webhooks'" -a 'create'`);
    expect(fish).toContain(`complete -c evalp -n "__evalp_at 'webhooks create'" -l event-type`);
    // bash parses it (-n: read, do not run).
    execFileSync("bash", ["-n"], { input: completionScript(program(), "bash") });
  });
});
