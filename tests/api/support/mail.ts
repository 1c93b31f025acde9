import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

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
