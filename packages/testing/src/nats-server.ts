import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NATS_USERS, type NatsNames, type NatsUser, natsPermissions } from "@evalp/kit";
import { natsServer } from "@evalp/local-servers";
import { freePort } from "./ports.js";

/**
 * The platform's NATS users for a test server: production's permission layout
 * (`natsPermissions`) over the names of the test's streams, each user with a fresh password,
 * and a `harness` user without limits for the test itself (to read streams, to publish as no
 * process may).
 */
export type NatsAuthorization = {
  /** The settings a process connects with as `user`. */
  credentials(user: NatsUser): { NATS_USER: NatsUser; NATS_PASSWORD: string };
  /** The test's own user (connect options `user` and `pass`). */
  harness: { user: string; pass: string };
  /** The `authorization` block of the server's configuration. */
  conf: string;
};

export function natsAuthorization(names: NatsNames): NatsAuthorization {
  const permissions = natsPermissions(names);
  const password = () => randomBytes(18).toString("base64url");
  const passwords = Object.fromEntries(NATS_USERS.map((user) => [user, password()])) as Record<
    NatsUser,
    string
  >;
  const harness = { user: "harness", pass: password() };
  const users = [
    ...NATS_USERS.map((user) => ({ user, password: passwords[user], permissions: permissions[user] })),
    { user: harness.user, password: harness.pass },
  ];
  return {
    credentials: (user) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] }),
    harness,
    // The server's configuration format reads JSON maps and arrays; quoted strings are literal
    // (no `$variable` substitution), which the `$JS.…` subjects need.
    conf: `authorization: ${JSON.stringify({ users }, null, 2)}\n`,
  };
}

/** A NATS server with JetStream of a test's own: its own port and store, stopped and started at will. */
export type TestNatsServer = {
  url: string;
  /** The users it accepts, when it was started with an authorization (else anyone may do anything). */
  authorization?: NatsAuthorization;
  /** Kills the server (SIGKILL by default) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  close(): Promise<void>;
};

/**
 * Starts `nats-server -js` on 127.0.0.1 and a free port with a temporary store directory, so
 * that a test can restart "NATS" without disturbing the shared server other tests use; with an
 * authorization, only its users may connect, each within its permissions.
 */
export async function startNatsServer(
  options: { authorization?: NatsAuthorization } = {},
): Promise<TestNatsServer> {
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), "evalp-nats-"));
  const args: string[] = [];
  if (options.authorization) {
    const conf = join(store, "nats.conf");
    writeFileSync(conf, options.authorization.conf, { mode: 0o600 });
    args.push("-c", conf);
  }
  const server = natsServer({
    host: "127.0.0.1",
    port,
    storeDir: join(store, "jetstream"),
    args,
    stopSignal: "SIGKILL",
  });
  await server.start();
  return {
    url: `nats://127.0.0.1:${port}`,
    ...(options.authorization ? { authorization: options.authorization } : {}),
    stop: (signal) => server.stop(signal),
    start: () => server.start(),
    async close() {
      await server.stop();
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
  const servers = nodes.map((node, i) =>
    natsServer({
      host: "127.0.0.1",
      port: node.port,
      storeDir: node.store,
      args: [
        ...["-n", `node-${i}`, "--cluster_name", "evalp-test"],
        ...["--cluster", `nats://127.0.0.1:${node.cluster}`, "--routes", routes],
      ],
      stopSignal: "SIGKILL",
    }),
  );
  const close = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    for (const node of nodes) rmSync(node.store, { recursive: true, force: true });
  };
  try {
    await Promise.all(servers.map((server) => server.start()));
  } catch (error) {
    await close();
    throw error;
  }
  return { urls: nodes.map((node) => `nats://127.0.0.1:${node.port}`), close };
}
