import { EvalpApiError, unwrap } from "@evalp/client";
import type { Command } from "commander";
import { updateConfig } from "../config-file.js";
import type { Context } from "../context.js";
import { usageError } from "../errors.js";
import type { Act } from "../program.js";

/** `login`, `logout`, `whoami`: a session for a person, kept in the config file. */
export function registerAuthCommands(program: Command, act: Act): void {
  program
    .command("login")
    .description("log in with an email and password; the access token (12 h) is kept in the config file")
    .requiredOption("--email <email>", "the account's email")
    .option("--password-stdin", "read the password from stdin (for scripts)")
    .action(act(login));

  program
    .command("logout")
    .description("end the session (the token is revoked) and forget it")
    .action(act(logout));

  program
    .command("whoami")
    .description("who the configured credential is, and its scopes")
    .action(act(whoami));
}

async function login(context: Context, _args: string[], options: Record<string, unknown>): Promise<void> {
  const email = String(options.email);
  const password = await readPassword(context, options.passwordStdin === true);
  const session = await unwrap(
    context.runtime
      .connect(context.settings.url, undefined)
      .POST("/auth/login", { body: { email, password } }),
  );
  const asSession = context.runtime.connect(context.settings.url, {
    kind: "token",
    value: session.access_token,
    source: "login",
  });
  // The session acts in its active organization: it becomes the default unless --org names one.
  const org =
    context.settings.org && context.settings.org !== context.config.org
      ? context.settings.org
      : (await unwrap(asSession.GET("/v1/session/active-organization"))).organization_id;
  const sameOrg = org === context.config.org;
  await updateConfig(
    context.configPath,
    {
      url: context.settings.url,
      token: session.access_token,
      token_expires_at: session.expires_at,
      // A key in the file would shadow the session just opened; ids of another organization are stale.
      api_key: undefined,
      org,
      app: sameOrg ? context.config.app : undefined,
      env: sameOrg ? context.config.env : undefined,
    },
    context.profile,
  );
  const shadow = context.runtime.env.EVALP_API_KEY
    ? "EVALP_API_KEY"
    : context.runtime.env.EVALP_TOKEN
      ? "EVALP_TOKEN"
      : undefined;
  if (context.output.json)
    context.output.item(
      { email, url: context.settings.url, organization_id: org, expires_at: session.expires_at },
      [],
    );
  else context.output.note(`Logged in as ${email} (organization ${org}) until ${session.expires_at}.`);
  if (shadow) context.output.note(`Note: ${shadow} is set and is used instead of this session.`);
}

/** The password from stdin (one line, its line end dropped) or asked on the terminal. */
async function readPassword(context: Context, fromStdin: boolean): Promise<string> {
  let password: string;
  if (fromStdin) password = (await context.runtime.readStdin()).replace(/\r?\n$/, "");
  else if (context.runtime.promptPassword) password = await context.runtime.promptPassword("Password: ");
  else throw usageError("no terminal to ask the password on: pass --password-stdin and pipe it in");
  if (password === "") throw usageError("the password is empty");
  return password;
}

async function logout(context: Context): Promise<void> {
  const token = context.config.token ?? context.runtime.env.EVALP_TOKEN;
  if (!token) {
    context.output.note("Not logged in.");
    return;
  }
  try {
    await context.runtime
      .connect(context.settings.url, { kind: "token", value: token, source: "logout" })
      .POST("/auth/logout")
      .then(unwrap);
  } catch (error) {
    // A token the API no longer knows (expired, revoked) is as good as logged out; forget it all the same.
    if (!isGone(error)) throw error;
  }
  if (context.config.token)
    await updateConfig(
      context.configPath,
      { token: undefined, token_expires_at: undefined },
      context.profile,
    );
  context.output.note("Logged out.");
}

function isGone(error: unknown): boolean {
  return (
    error instanceof EvalpApiError && (error.code === "unauthenticated" || error.code === "token_expired")
  );
}

async function whoami(context: Context): Promise<void> {
  const principal = await unwrap(context.api().GET("/v1/auth/principal"));
  if (context.output.json) {
    context.output.item(principal, []);
    return;
  }
  const { settings } = context;
  context.output.item(
    {
      ...principal,
      url: settings.url,
      credential: settings.credential?.source,
      org: settings.org,
      app: settings.app,
      env: settings.env,
    },
    ["kind", "principal_id", "email", "api_key_name", "scopes", "url", "credential", "org", "app", "env"],
  );
}
