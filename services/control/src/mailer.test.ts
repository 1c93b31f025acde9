import { once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@evalp/kit";
import { SMTPServer } from "smtp-server";
import { afterEach, describe, expect, it } from "vitest";
import { createMailer } from "./mailer.js";

const logger = createLogger("mailer-test", "silent");
const mail = { to: "grace@example.com", subject: "You are invited", text: "Follow the link." };

type Received = { envelopeFrom: string; envelopeTo: string[]; message: string };

/** A real SMTP server on a free loopback port that keeps every message it accepts. */
async function startSmtpServer() {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      let message = "";
      stream.on("data", (chunk: Buffer) => {
        message += chunk.toString("utf8");
      });
      stream.on("end", () => {
        const from = session.envelope.mailFrom;
        received.push({
          envelopeFrom: from ? from.address : "",
          envelopeTo: session.envelope.rcptTo.map((to) => to.address),
          message,
        });
        callback();
      });
    },
  });
  server.listen(0, "127.0.0.1");
  await once(server.server, "listening");
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe("createMailer", () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it("sends over SMTP from MAIL_FROM, with MAIL_REPLY_TO as Reply-To", async () => {
    const smtp = await startSmtpServer();
    closers.push(smtp.close);
    const mailer = createMailer({
      smtpUrl: smtp.url,
      mailDir: mkdtempSync(join(tmpdir(), "evalp-mail-")),
      from: "Acme Evaluations <evaluations@acme.example>",
      replyTo: "support@acme.example",
      logger,
    });
    await mailer.send(mail);
    expect(smtp.received).toHaveLength(1);
    const [message] = smtp.received;
    expect(message?.envelopeFrom).toBe("evaluations@acme.example");
    expect(message?.envelopeTo).toEqual(["grace@example.com"]);
    expect(message?.message).toMatch(/^From: Acme Evaluations <evaluations@acme\.example>\r$/m);
    expect(message?.message).toMatch(/^Reply-To: support@acme\.example\r$/m);
    expect(message?.message).toMatch(/^Subject: You are invited\r$/m);
  });

  it("sends no Reply-To when none is set (replies go to the sender)", async () => {
    const smtp = await startSmtpServer();
    closers.push(smtp.close);
    const mailer = createMailer({
      smtpUrl: smtp.url,
      mailDir: mkdtempSync(join(tmpdir(), "evalp-mail-")),
      from: "evaluations@acme.example",
      logger,
    });
    await mailer.send(mail);
    expect(smtp.received[0]?.message).not.toMatch(/^Reply-To:/im);
  });

  it("refuses to send over SMTP without a sender", () => {
    expect(() => createMailer({ smtpUrl: "smtp://127.0.0.1:1", mailDir: "unused", logger })).toThrow(
      /MAIL_FROM/,
    );
  });

  it("writes each mail, with its sender, as a JSON file readable by its owner only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "evalp-mail-"));
    const mailer = createMailer({ mailDir: dir, from: "evaluations@acme.example", logger });
    await mailer.send(mail);
    const [file] = readdirSync(dir);
    expect(file).toBeDefined();
    const written = JSON.parse(readFileSync(join(dir, file as string), "utf8"));
    expect(written).toMatchObject({ ...mail, from: "evaluations@acme.example", reply_to: null });
    expect(Number.isNaN(Date.parse(written.sent_at))).toBe(false);
  });
});
