import { describe, expect, it } from "vitest";
import { readinessBody, runReadiness } from "./readiness.js";

const up = async () => {};
const down = async () => {
  throw new Error("refused");
};

describe("runReadiness", () => {
  it("stays ready when only dependencies that degrade fail, and names them", async () => {
    const readiness = await runReadiness([
      { name: "postgres", check: up },
      { name: "nats", check: down, degrades: true },
    ]);
    expect(readiness).toEqual({ ready: true, failing: ["nats"] });
    expect(readinessBody(readiness)).toEqual({
      status: 200,
      body: { status: "degraded", failing: ["nats"] },
    });
  });

  it("is not ready when a dependency it cannot serve without fails", async () => {
    const readiness = await runReadiness([
      { name: "postgres", check: down },
      { name: "nats", check: down, degrades: true },
    ]);
    expect(readiness).toEqual({ ready: false, failing: ["postgres", "nats"] });
    expect(readinessBody(readiness).status).toBe(503);
  });

  it("is plainly ready when everything answers", async () => {
    const readiness = await runReadiness([{ name: "postgres", check: up }]);
    expect(readinessBody(readiness)).toEqual({ status: 200, body: { status: "ready" } });
  });
});
