import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { answers, freePort } from "./ports.js";

/** A NATS server with JetStream of a test's own: its own port and store, stopped and started at will. */
export type TestNatsServer = {
  url: string;
  /** Kills the server (SIGKILL by default) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  close(): Promise<void>;
};

/** `NATS_SERVER_BIN`, else Debian's path (not on every PATH), else whatever PATH finds. */
const BINARY =
  process.env.NATS_SERVER_BIN ??
  (existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server");

/**
 * Starts `nats-server -js` on 127.0.0.1 and a free port with a temporary store directory, so
 * that a test can restart "NATS" without disturbing the shared server other tests use.
 */
export async function startNatsServer(): Promise<TestNatsServer> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "evalp-nats-"));
  let child: ChildProcess | null = null;

  async function start() {
    child = spawn(BINARY, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      if (await answers(port)) return;
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("nats-server did not start");
  }

  async function stop(signal: NodeJS.Signals = "SIGKILL") {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = once(running, "exit");
    running.kill(signal);
    await exited;
  }

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    stop,
    start,
    async close() {
      await stop();
      rmSync(store, { recursive: true, force: true });
    },
  };
}

/** A JetStream cluster of a test's own on loopback: what stream replicas need (one node holds one replica). */
export type TestNatsCluster = { urls: string[]; close(): Promise<void> };

/**
 * Starts `size` nats-servers clustered with each other (routes between all), JetStream on each
 * with a store of its own, and resolves once every node answers.
 */
export async function startNatsCluster(size = 3): Promise<TestNatsCluster> {
  const nodes: Array<{ port: number; cluster: number; store: string }> = [];
  for (let i = 0; i < size; i++) {
    nodes.push({
      port: await freePort(),
      cluster: await freePort(),
      store: mkdtempSync(join(tmpdir(), "evalp-natsc-")),
    });
  }
  const routes = nodes.map((node) => `nats://127.0.0.1:${node.cluster}`).join(",");
  const children = nodes.map((node, i) =>
    spawn(
      BINARY,
      [
        ...["-a", "127.0.0.1", "-p", String(node.port), "-js", "-sd", node.store, "-n", `node-${i}`],
        ...[
          "--cluster_name",
          "evalp-test",
          "--cluster",
          `nats://127.0.0.1:${node.cluster}`,
          "--routes",
          routes,
        ],
      ],
      { stdio: "ignore" },
    ),
  );
  const close = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const exited = once(child, "exit");
        child.kill("SIGKILL");
        await exited;
      }),
    );
    for (const node of nodes) rmSync(node.store, { recursive: true, force: true });
  };
  for (const node of nodes) {
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await answers(node.port);
      if (!up) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!up) {
      await close();
      throw new Error("a nats-server of the cluster did not start");
    }
  }
  return { urls: nodes.map((node) => `nats://127.0.0.1:${node.port}`), close };
}
