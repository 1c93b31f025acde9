import { stderr, stdin } from "node:process";
import { emitKeypressEvents } from "node:readline";

/** All of stdin as text (a piped password, for `login --password-stdin`). */
export async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Asks for a password on the terminal without echoing what is typed; Ctrl-C aborts. Only offered
 * when stdin is a terminal, so a script is told to use `--password-stdin` rather than hang.
 */
export function promptPassword(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    stderr.write(prompt);
    emitKeypressEvents(stdin);
    stdin.setRawMode(true);
    stdin.resume();
    let typed = "";
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off("keypress", onKey);
      stderr.write("\n");
      if (error) reject(error);
      else resolve(typed);
    };
    const onKey = (text: string | undefined, key: { name?: string; ctrl?: boolean } | undefined) => {
      if (key?.ctrl && key.name === "c") done(new Error("aborted"));
      else if (key?.name === "return" || key?.name === "enter") done();
      else if (key?.name === "backspace") typed = typed.slice(0, -1);
      else if (text && !key?.ctrl) typed += text;
    };
    stdin.on("keypress", onKey);
  });
}
