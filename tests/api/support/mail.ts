import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { ApiClient } from "./client.js";
import { ik } from "./fixtures.js";

/** A mail as the platform writes it into MAIL_DIR when no SMTP server is configured. */
export type SentMail = {
  /** MAIL_FROM and MAIL_REPLY_TO, null when unset. */
  from: string | null;
  reply_to: string | null;
  to: string;
  subject: string;
  text: string;
  sent_at: string;
};

/** Every mail written so far, oldest first. */
export function sentMail(dir: string): SentMail[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as SentMail);
}

/** The token of the link in a mail (`…?token=<token>`). */
export function tokenIn(mail: SentMail | undefined): string {
  if (!mail) throw new Error("no such mail was sent");
  const match = /[?&]token=([0-9A-Za-z]+)/.exec(mail.text);
  if (!match?.[1]) throw new Error(`no token link in mail: ${mail.subject}`);
  return match[1];
}

/**
 * Invites `email` into the organization at `org` (as a member unless `role` says) and accepts the
 * mailed invitation with `password` (an existing account's own), as the colleague of the journey
 * does (docs/journey.md); returns the acceptance.
 */
export async function inviteColleague(
  api: ApiClient,
  options: { org: string; token: string; mailDir: string; email: string; password: string; role?: string },
) {
  const invite = await api.post(
    `${options.org}/memberships`,
    { email: options.email, role: options.role ?? "member" },
    { token: options.token, idempotencyKey: ik() },
  );
  expect(invite.body.status).toBe("invited");
  const mail = sentMail(options.mailDir).findLast((m) => m.to === options.email);
  const accepted = await api.post(
    "/v1/invitations/accept",
    { token: tokenIn(mail), password: options.password },
    { idempotencyKey: ik() },
  );
  expect(accepted.status).toBe(200);
  return accepted;
}
