import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "@evalp/client";
import { describe, expect, it } from "vitest";
import { forwardEvent, isSigningSecret, newSigningSecret, signatureHeaders } from "./forward.js";

const BODY = '{"id":"0b9e6f7a-3c1d-4e2f-8a5b-6c7d8e9f0a1b","type":"webhook.test","data":{}}';
const ID = "0b9e6f7a-3c1d-4e2f-8a5b-6c7d8e9f0a1b";

describe("signing as a webhook endpoint is signed", () => {
  it("makes secrets the platform takes", () => {
    const secret = newSigningSecret();
    expect(isSigningSecret(secret)).toBe(true);
    expect(secret).not.toBe(newSigningSecret());
    expect(isSigningSecret("whsec_c2hvcnQ=")).toBe(false);
    expect(isSigningSecret("sk_abc")).toBe(false);
  });

  it("signs what the client's Standard Webhooks verification accepts, and only with its secret", async () => {
    const secret = newSigningSecret();
    const headers = signatureHeaders(secret, ID, BODY);
    await expect(verifyWebhook(secret, headers, BODY)).resolves.toMatchObject({ type: "webhook.test" });
    await expect(verifyWebhook(newSigningSecret(), headers, BODY)).rejects.toThrow("no matching signature");
    await expect(verifyWebhook(secret, headers, `${BODY} `)).rejects.toThrow("no matching signature");
  });

  it("forwards the same bytes with the headers, and says what the receiver answered", async () => {
    const secret = newSigningSecret();
    const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      request.on("end", () => {
        received.push({ headers: request.headers, body });
        response.writeHead(418).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(await forwardEvent(`http://127.0.0.1:${port}/hook`, secret, ID, BODY)).toEqual({ status: 418 });
      const [delivery] = received;
      expect(delivery?.body).toBe(BODY);
      await expect(
        verifyWebhook(secret, delivery?.headers ?? {}, delivery?.body ?? ""),
      ).resolves.toBeTruthy();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("says so when nothing listens at the URL", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    expect(await forwardEvent(`http://127.0.0.1:${port}/hook`, newSigningSecret(), ID, BODY)).toEqual({
      error: "connection refused",
    });
  });
});
