import type { Command } from "commander";

/*
 * `evalp completion bash|zsh|fish`: a completion script made from the program itself, so that it
 * knows every command and option the running CLI has, and never a list kept by hand. The scripts
 * complete command names and long options (a command's and the global ones); values are left to
 * the shell's own file completion.
 */

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** One command of the tree: its path from the program (`webhooks create`), what follows it, and its options. */
type Node = {
  path: string;
  description: string;
  subcommands: Array<{ name: string; description: string }>;
  options: Array<{ flag: string; description: string }>;
};

/** Every command path of the program (the program itself as ""), with its subcommands and options. */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const visit = (command: Command, path: string) => {
    const visible = command.commands.filter((child) => !isHidden(child));
    nodes.push({
      path,
      description: command.description(),
      subcommands: visible.flatMap((child) =>
        [child.name(), ...child.aliases()].map((name) => ({ name, description: child.description() })),
      ),
      options: command.options
        .filter((option) => !option.hidden && option.long)
        .map((option) => ({ flag: option.long as string, description: option.description })),
    });
    for (const child of visible) {
      for (const name of [child.name(), ...child.aliases()]) visit(child, path ? `${path} ${name}` : name);
    }
  };
  visit(program, "");
  return nodes;
}

function isHidden(command: Command): boolean {
  // commander keeps `hidden` private; the implicit `help` command is the one to leave out.
  return command.name() === "help";
}

/** The completion script of a shell for the program. */
export function completionScript(program: Command, shell: Shell): string {
  const nodes = commandTree(program);
  const globals = nodes.find((node) => node.path === "")?.options ?? [];
  const name = program.name();
  switch (shell) {
    case "bash":
      return bash(name, nodes, globals);
    case "zsh":
      return zsh(name, nodes, globals);
    case "fish":
      return fish(name, nodes, globals);
  }
}

/** A shell word in single quotes (a quote inside closed, escaped and reopened). */
function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The case patterns matching every command path but the program's. */
function pathPatterns(nodes: Node[]): string {
  return nodes
    .filter((node) => node.path)
    .map((node) => quote(node.path))
    .join("|");
}

/** What may follow a path: its subcommands, its options and the global ones. */
function words(node: Node, globals: Node["options"]): string {
  const flags = new Set([...node.options, ...globals].map((option) => option.flag));
  return [...node.subcommands.map((sub) => sub.name), ...flags].join(" ");
}

function bash(name: string, nodes: Node[], globals: Node["options"]): string {
  const fn = `_${name.replace(/\W/g, "_")}_completion`;
  const cases = nodes.map((node) => `    ${quote(node.path)}) candidates=${quote(words(node, globals))} ;;`);
  return `# bash completion for ${name}: source it, or put it in ~/.local/share/bash-completion/completions/${name}
${fn}() {
  local cur word candidate cmdpath="" candidates="" i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in -*) continue ;; esac
    candidate="\${cmdpath:+$cmdpath }$word"
    case "$candidate" in
      ${pathPatterns(nodes)}) cmdpath="$candidate" ;;
    esac
  done
  case "$cmdpath" in
${cases.join("\n")}
  esac
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
}

function zsh(name: string, nodes: Node[], globals: Node["options"]): string {
  const fn = `_${name.replace(/\W/g, "_")}`;
  const describe = (node: Node) => {
    const entries = [
      ...node.subcommands.map((sub) => `${sub.name}:${sub.description}`),
      ...[...node.options, ...globals].map((option) => `${option.flag}:${option.description}`),
    ];
    // The part before the first colon is what is completed; the rest describes it.
    return [...new Set(entries)].map(quote).join(" ");
  };
  const cases = nodes.map((node) => `    (${quote(node.path)}) candidates=(${describe(node)}) ;;`);
  return `#compdef ${name}
# zsh completion for ${name}: put it as _${name} in a folder of $fpath, or source it after compinit
${fn}() {
  local word candidate cmdpath="" i
  local -a candidates
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    [[ "$word" == -* ]] && continue
    candidate="\${cmdpath:+$cmdpath }$word"
    case "$candidate" in
      (${pathPatterns(nodes)}) cmdpath="$candidate" ;;
    esac
  done
  case "$cmdpath" in
${cases.join("\n")}
  esac
  _describe -t commands '${name}' candidates
}
compdef ${fn} ${name}
`;
}

function fish(name: string, nodes: Node[], globals: Node["options"]): string {
  const fn = `__${name.replace(/\W/g, "_")}_at`;
  const paths = nodes
    .filter((node) => node.path)
    .map((node) => quote(node.path))
    .join(" ");
  const lines: string[] = [];
  for (const option of globals) {
    lines.push(`complete -c ${name} -l ${option.flag.replace(/^--/, "")} -d ${quote(option.description)}`);
  }
  for (const node of nodes) {
    // Command names are letters, digits and dashes: single quotes inside double ones hold them.
    const condition = `"${fn} '${node.path}'"`;
    for (const sub of node.subcommands) {
      lines.push(`complete -c ${name} -n ${condition} -a ${quote(sub.name)} -d ${quote(sub.description)}`);
    }
    if (!node.path) continue;
    for (const option of node.options) {
      lines.push(
        `complete -c ${name} -n ${condition} -l ${option.flag.replace(/^--/, "")} -d ${quote(option.description)}`,
      );
    }
  }
  return `# fish completion for ${name}: put it in ~/.config/fish/completions/${name}.fish
function ${fn}
  set -l cmdpath ""
  for word in (commandline -opc)[2..-1]
    string match -q -- '-*' $word; and continue
    set -l candidate (string trim -- "$cmdpath $word")
    contains -- $candidate ${paths}; and set cmdpath $candidate
  end
  test "$cmdpath" = "$argv[1]"
end
complete -c ${name} -f
${lines.join("\n")}
`;
}
