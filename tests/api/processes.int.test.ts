import { afterAll, describe, expect, it } from "vitest";
import { type PlatformProcesses, SERVICES, startProcesses } from "./support/processes.js";

let platform: PlatformProcesses | undefined;

afterAll(async () => {
  await platform?.close();
});

describe("the processes, as npm start runs them", () => {
  it("boot with their ops ports, serve a request end to end, and exit 0 on SIGTERM", async () => {
    platform = await startProcesses();
    const base = platform.url;
    for (const name of SERVICES) {
      const ops = platform.opsUrl(name);
      expect((await fetch(`${ops}/healthz`)).status).toBe(200);
      expect((await fetch(`${ops}/readyz`)).status).toBe(200);
      expect(await (await fetch(`${ops}/metrics`)).text()).toContain(`service="${name}"`);
    }
    const signup = await fetch(`${base}/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "proc@example.com", password: "password123", organization_name: "Proc" }),
    });
    expect(signup.status).toBe(201);

    const codes = await platform.stop();
    expect(codes, platform.stderr.join("\n")).toEqual([0, 0, 0, 0, 0]);
  }, 40_000);
});
