import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Logger, newId } from "@evalp/kit";
import nodemailer from "nodemailer";

/** One outgoing message (contract §8). */
export type Mail = { to: string; subject: string; text: string };

export type Mailer = { send(mail: Mail): Promise<void> };

/**
 * Invitations and resets go out through SMTP when `SMTP_URL` is set; otherwise each message is
 * written as one JSON file `{to, subject, text, sent_at}` into `MAIL_DIR`, so development and
 * tests can read them. The log line says a mail went out, never what it says (it holds a token).
 */
export function createMailer(options: {
  smtpUrl?: string | undefined;
  mailDir: string;
  logger: Logger;
}): Mailer {
  if (options.smtpUrl) {
    const transport = nodemailer.createTransport(options.smtpUrl);
    return {
      async send(mail) {
        await transport.sendMail({ from: "evalp <no-reply@evalp.local>", ...mail });
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
      await writeFile(file, `${JSON.stringify({ ...mail, sent_at: sentAt }, null, 2)}\n`, { mode: 0o600 });
      options.logger.info({ subject: mail.subject, file }, "mail written");
    },
  };
}
