import { afterAll, describe, expect, it } from "vitest";
import { type PlatformProcesses, SERVICES, startProcesses } from "./support/processes.js";

let platform: PlatformProcesses | undefined;

afterAll(async () => {
  await platform?.close();
});

describe("the processes, as npm start runs them", () => {
  it("boot with their ops ports, serve a request end to end, and exit 0 on SIGTERM", async () => {
    platform = await startProcesses({ env: { LOG_LEVEL: "info" } });
    const base = platform.url;
    // Each process states once which Node.js it runs on (the one that runs this test).
    const started = platform
      .logTail()
      .split("\n")
      .map((line) => /^(\w+): (\{.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => ({ process: match[1], line: JSON.parse(match[2] as string) }))
      .filter(({ line }) => line.msg === "starting");
    expect(started.map(({ process }) => process).sort()).toEqual([...SERVICES, "gateway"].sort());
    for (const { line } of started) expect(line.node).toBe(process.version);
    for (const name of [...SERVICES, "gateway" as const]) {
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
