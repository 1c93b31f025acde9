import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Logger, newId } from "@evalp/kit";
import nodemailer from "nodemailer";

/** One outgoing message (docs/configuration.md). */
export type Mail = { to: string; subject: string; text: string };

export type Mailer = { send(mail: Mail): Promise<void> };

/** Who mails are from and where replies go (`MAIL_FROM`, `MAIL_REPLY_TO`). */
export type Sender = { from?: string | undefined; replyTo?: string | undefined };

/**
 * Invitations and resets go out through SMTP when `SMTP_URL` is set (from `MAIL_FROM`, which the
 * configuration requires then); otherwise each message is written as one JSON file
 * `{from, reply_to, to, subject, text, sent_at}` into `MAIL_DIR`, so development and tests can
 * read them. The log line says a mail went out, never what it says (it holds a token).
 */
export function createMailer(
  options: { smtpUrl?: string | undefined; mailDir: string; logger: Logger } & Sender,
): Mailer {
  const { from, replyTo } = options;
  if (options.smtpUrl) {
    if (!from) throw new Error("MAIL_FROM is required to send mail over SMTP");
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(mail) {
        await transport.sendMail({ ...mail, from, ...(replyTo ? { replyTo } : {}) });
        options.logger.info({ subject: mail.subject }, "mail sent over SMTP");
      },
    };
  }
  const dir = resolve(options.mailDir);
  return {
    async send(mail) {
      await mkdir(dir, { recursive: true });
      const sentAt = new Date().toISOString();
      const file = join(dir, `${sentAt.replaceAll(":", "-")}-${newId()}.json`);
      await writeFile(
        file,
        `${JSON.stringify({ from: from ?? null, reply_to: replyTo ?? null, ...mail, sent_at: sentAt }, null, 2)}\n`,
        { mode: 0o600 },
      );
      options.logger.info({ subject: mail.subject, file }, "mail written");
    },
  };
}
