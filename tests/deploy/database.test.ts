// The production overlay's database (deploy/k8s/overlays/prod, postgres-*.yaml), rendered as it
// would be applied: a CloudNativePG Cluster whose commits wait for a replica, continuous backup
// to an object store whose credentials only Secrets hold, a nightly base backup, a PgBouncer
// Pooler in transaction mode that the services' queries go through, the connections that need a
// session of their own straight to the primary, and the exporters scraped. Custom resources are
// checked structurally (support/schemas.ts), as the other deploy tests check them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema } from "@evalp/kit";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { beforeAll, describe, expect, it } from "vitest";
import { findRenderer, type K8sObject } from "./support/kustomize.js";
import { type Endpoint, evaluate, matchesSelector, policiesOf } from "./support/network.js";
import { schemaProblems } from "./support/schemas.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROD = join(ROOT, "deploy/k8s/overlays/prod");
const SERVICES = ["control", "platform", "interview", "webhooks"] as const;
const BARMAN_PLUGIN = "barman-cloud.cloudnative-pg.io";

let objects: K8sObject[];
beforeAll(() => {
  objects = findRenderer().build(PROD);
});

const spec = (object: K8sObject | undefined): Record<string, any> =>
  (object?.spec ?? {}) as Record<string, any>;
const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
const only = (kind: string): K8sObject => {
  const found = ofKind(kind);
  expect(
    found.map((object) => object.metadata.name),
    kind,
  ).toHaveLength(1);
  return found[0] as K8sObject;
};
const named = (kind: string, name: string) =>
  objects.find((object) => object.kind === kind && object.metadata.name === name);

function pod(name: string): IPodSpec {
  const deployment = named("Deployment", name);
  if (!deployment) throw new Error(`no Deployment ${name}`);
  return spec(deployment).template.spec as IPodSpec;
}

/** A container's explicit environment, secret references shown as `secret:<name>/<key>`. */
function env(container: IContainer): Record<string, string> {
  const result: Record<string, string> = {};
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    result[variable.name] = ref ? `secret:${ref.name}/${ref.key}` : (variable.value ?? "");
  }
  return result;
}

/** Every string in an object, with its path: to look for credentials written inline. */
function strings(value: unknown, path = ""): [string, string][] {
  if (typeof value === "string") return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((entry, index) => strings(entry, `${path}[${index}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, entry]) => strings(entry, path ? `${path}.${key}` : key));
  }
  return [];
}

describe("the production database", () => {
  it("renders a Cluster, an ObjectStore, a ScheduledBackup, a Pooler and two PodMonitors, each valid", () => {
    for (const kind of ["Cluster", "ObjectStore", "ScheduledBackup", "Pooler"]) only(kind);
    expect(ofKind("PodMonitor")).toHaveLength(2);
    const database = objects.filter((object) =>
      ["Cluster", "ObjectStore", "ScheduledBackup", "Pooler", "PodMonitor"].includes(object.kind),
    );
    expect(database.flatMap(schemaProblems)).toEqual([]);
    // Nothing secret is rendered: the operator generates evalp-db-app, the operator of the
    // platform creates evalp-db-backup-credentials.
    expect(ofKind("Secret")).toEqual([]);
  });

  it("commits only once a replica has the WAL (quorum of one among three), and fails over only to a replica that has it", () => {
    const cluster = spec(only("Cluster"));
    expect(cluster.instances).toBe(3);
    // The stanza of CloudNativePG 1.24+, not the deprecated minSyncReplicas/maxSyncReplicas.
    expect(cluster.minSyncReplicas).toBeUndefined();
    expect(cluster.postgresql.synchronous).toEqual({
      method: "any",
      number: 1,
      dataDurability: "required",
      failoverQuorum: true,
    });
    // PostgreSQL 18 reports search_path, which the Pooler tracks per client.
    const major = Number(/:(\d+)/.exec(cluster.imageName)?.[1]);
    expect(major).toBeGreaterThanOrEqual(18);
  });

  it("archives WAL continuously to an object store whose credentials are Secret references only", () => {
    const cluster = only("Cluster");
    const archivers = (spec(cluster).plugins ?? []).filter(
      (plugin: { isWALArchiver?: boolean }) => plugin.isWALArchiver,
    );
    expect(archivers).toHaveLength(1);
    expect(archivers[0].name).toBe(BARMAN_PLUGIN);
    expect(spec(cluster).backup).toBeUndefined();
    const store = named("ObjectStore", archivers[0].parameters.barmanObjectName);
    expect(store, "the ObjectStore the Cluster names").toBeDefined();
    const configuration = spec(store).configuration;
    expect(configuration.destinationPath).toMatch(/^s3:\/\/[^/]+\//);
    expect(configuration.s3Credentials).toEqual({
      accessKeyId: { name: "evalp-db-backup-credentials", key: "ACCESS_KEY_ID" },
      secretAccessKey: { name: "evalp-db-backup-credentials", key: "ACCESS_SECRET_KEY" },
    });
    // No key id, secret or credentialed URL written anywhere in the store.
    const inline = strings(spec(store)).filter(
      ([path, value]) =>
        (/(accessKeyId|secretAccessKey|sessionToken|password|secret)$/i.test(path) &&
          !path.endsWith(".key")) ||
        /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]+:[^/@\s]+@/i.test(value) ||
        /AKIA[0-9A-Z]{16}/.test(value),
    );
    expect(inline).toEqual([]);
    expect(configuration.wal.compression).toBeDefined();
    expect(spec(store).retentionPolicy).toMatch(/^[1-9][0-9]*[dwm]$/);
  });

  it("takes a base backup every night through the plugin, and one as soon as it is applied", () => {
    const cluster = only("Cluster");
    const backup = spec(only("ScheduledBackup"));
    expect(backup.cluster).toEqual({ name: cluster.metadata.name });
    expect(backup.method).toBe("plugin");
    expect(backup.pluginConfiguration).toEqual({ name: BARMAN_PLUGIN });
    expect(backup.immediate).toBe(true);
    // Seconds first: "0 0 3 * * *" is 03:00:00 every day.
    const [seconds, minutes, hours, ...rest] = backup.schedule.split(/\s+/);
    expect([seconds, minutes, rest]).toEqual(["0", "0", ["*", "*", "*"]]);
    expect(Number(hours)).toBeGreaterThanOrEqual(0);
  });

  it("pools the primary's connections with PgBouncer in transaction mode, keeping each client's search_path", () => {
    const cluster = only("Cluster");
    const pooler = only("Pooler");
    expect(spec(pooler).cluster).toEqual({ name: cluster.metadata.name });
    expect(spec(pooler).type).toBe("rw");
    expect(spec(pooler).instances).toBeGreaterThanOrEqual(2);
    expect(spec(pooler).pgbouncer.poolMode).toBe("transaction");
    const tracked = String(spec(pooler).pgbouncer.parameters.track_extra_parameters)
      .split(",")
      .map((name) => name.trim());
    expect(tracked).toContain("search_path");
    // 1.25.1 fixes CVE-2025-12819 (search_path tracked together with an auth_query).
    const image = spec(pooler).template.spec.containers.find(
      (container: IContainer) => container.name === "pgbouncer",
    )?.image as string;
    const [major, minor, patch] = (/:(\d+)\.(\d+)\.(\d+)$/.exec(image) ?? []).slice(1).map(Number);
    expect([major, minor, patch].every(Number.isInteger), image).toBe(true);
    expect((major as number) * 10_000 + (minor as number) * 100 + (patch as number)).toBeGreaterThanOrEqual(
      12_501,
    );
    // Its server connections against max_connections: the connection budget (scale-out.test.ts).
  });

  it("sends the services' queries through the Pooler, and LISTEN and migrations straight to the primary", () => {
    const cluster = only("Cluster").metadata.name;
    const pooler = only("Pooler").metadata.name;
    const settings = Object.keys(configSchema.shape);
    // The migration Job as one more "service": its DDL and advisory lock go to the primary.
    const job = named("Job", "evalp-migrate");
    for (const name of [...SERVICES, "evalp-migrate"]) {
      const podSpec = name === "evalp-migrate" ? (spec(job).template.spec as IPodSpec) : pod(name);
      const containers = [
        ...(podSpec.initContainers ?? []).filter((container) => container.name === "migrate"),
        ...podSpec.containers.filter((container) => container.name === name || container.name === "migrate"),
      ];
      expect(containers, name).toHaveLength(name === "evalp-migrate" ? 1 : 2);
      for (const container of containers) {
        const where = `${name}/${container.name}`;
        const variables = env(container);
        // The migrations as the database's owner; the server as its schema's own role, with its
        // own password and no other plane's.
        const migrating = container.name === "migrate";
        const user = migrating ? "evalp" : `evalp_${name}`;
        const secret = migrating ? `${cluster}-app` : `evalp-db-${name}`;
        // CloudNativePG names the Pooler's Service after the Pooler; no password in the URL.
        const url = new URL(variables.DATABASE_URL ?? "");
        expect([url.hostname, url.port, url.pathname, url.username, url.password], where).toEqual([
          pooler,
          "5432",
          "/evalp",
          user,
          "",
        ]);
        expect(variables.PGPASSWORD, where).toBe(`secret:${secret}/password`);
        // The generated `uri` points at <cluster>-rw, the Service that follows the primary.
        expect(variables.DATABASE_DIRECT_URL, where).toBe(
          `secret:${secret}/${migrating ? "uri" : "direct-uri"}`,
        );
        expect(settings, where).toContain("DATABASE_DIRECT_URL");
      }
    }
  });

  it("has a role per plane, with its password from that plane's Secret, and lets the owner migrate as each", () => {
    const roles = (spec(only("Cluster")).managed?.roles ?? []) as {
      name: string;
      login?: boolean;
      passwordSecret?: { name: string };
      inRoles?: string[];
    }[];
    for (const name of SERVICES) {
      const role = roles.find((entry) => entry.name === `evalp_${name}`);
      expect(role, name).toMatchObject({ login: true, passwordSecret: { name: `evalp-db-${name}` } });
      expect(role?.inRoles ?? [], name).toEqual([]);
    }
    const owner = roles.find((entry) => entry.name === spec(only("Cluster")).bootstrap.initdb.owner);
    expect(owner?.inRoles?.sort()).toEqual(SERVICES.map((name) => `evalp_${name}`).sort());
  });

  it("lets the services reach the Pooler's pods and the instances on 5432, and nothing else there", () => {
    const policies = policiesOf(objects);
    const pooler = only("Pooler").metadata.name;
    const cluster = only("Cluster").metadata.name;
    const stateEndpoint = (name: string, labels: Record<string, string>): Endpoint => ({
      kind: "pod",
      name,
      namespace: "evalp",
      namespaceLabels: { "kubernetes.io/metadata.name": "evalp" },
      labels,
      ip: "10.244.200.2",
    });
    // The labels CloudNativePG gives a Pooler's pods and an instance's.
    const poolerPod = stateEndpoint(`${pooler}-abc`, {
      "cnpg.io/poolerName": pooler,
      "cnpg.io/podRole": "pooler",
    });
    const instance = stateEndpoint(`${cluster}-1`, {
      "cnpg.io/cluster": cluster,
      "cnpg.io/podRole": "instance",
    });
    for (const name of SERVICES) {
      const labels = (spec(named("Deployment", name)).template.metadata.labels ?? {}) as Record<
        string,
        string
      >;
      const from: Endpoint = {
        kind: "pod",
        name,
        namespace: "evalp",
        namespaceLabels: { "kubernetes.io/metadata.name": "evalp" },
        labels,
        ip: "10.244.1.10",
      };
      for (const to of [poolerPod, instance]) {
        expect(evaluate(policies, { from, to, port: 5432 }).allowed, `${name} → ${to.name}:5432`).toBe(true);
        expect(evaluate(policies, { from, to, port: 5433 }).allowed, `${name} → ${to.name}:5433`).toBe(false);
      }
    }
  });

  it("lets only the services reach PgBouncer, and only PgBouncer, the services' direct sessions, the instances and the operator reach Postgres", () => {
    const policies = policiesOf(objects);
    const pooler = only("Pooler").metadata.name;
    const cluster = only("Cluster").metadata.name;
    const pod = (namespace: string, name: string, labels: Record<string, string>, ip: string): Endpoint => ({
      kind: "pod",
      name,
      namespace,
      namespaceLabels: { "kubernetes.io/metadata.name": namespace },
      labels,
      ip,
    });
    const labelsOf = (name: string) =>
      (spec(named("Deployment", name)).template.metadata.labels ?? {}) as Record<string, string>;
    const poolerPod = pod(
      "evalp",
      `${pooler}-abc`,
      { "cnpg.io/poolerName": pooler, "cnpg.io/podRole": "pooler" },
      "10.244.200.2",
    );
    const instance = pod(
      "evalp",
      `${cluster}-1`,
      { "cnpg.io/cluster": cluster, "cnpg.io/podRole": "instance" },
      "10.244.200.3",
    );
    const replica = pod(
      "evalp",
      `${cluster}-2`,
      { "cnpg.io/cluster": cluster, "cnpg.io/podRole": "instance" },
      "10.244.200.4",
    );
    const operator = pod(
      "cnpg-system",
      "cnpg-controller-manager",
      { "app.kubernetes.io/name": "cloudnative-pg" },
      "10.244.90.1",
    );
    const prometheus = pod(
      "monitoring",
      "prometheus",
      { "app.kubernetes.io/name": "prometheus" },
      "10.244.250.1",
    );
    const gateway = pod("evalp", "gateway", labelsOf("gateway"), "10.244.1.20");
    const neighbour = pod("evalp", "debug", { app: "debug" }, "10.244.1.30");
    const intruder = pod(
      "other-team",
      "intruder",
      { app: "intruder", ...labelsOf("control") },
      "10.244.251.1",
    );
    const check = (from: Endpoint, to: Endpoint, port: number) =>
      evaluate(policies, { from, to, port }).allowed;

    for (const name of SERVICES) {
      const service = pod("evalp", name, labelsOf(name), "10.244.1.10");
      expect(check(service, poolerPod, 5432), `${name} → PgBouncer`).toBe(true);
      // DATABASE_DIRECT_URL: the migrations' lock and the relays' LISTEN.
      expect(check(service, instance, 5432), `${name} → Postgres`).toBe(true);
      expect(check(service, poolerPod, 9127), `${name} → PgBouncer metrics`).toBe(false);
      expect(check(service, instance, 8000), `${name} → instance manager`).toBe(false);
    }
    expect(check(poolerPod, instance, 5432)).toBe(true);
    expect(check(replica, instance, 5432)).toBe(true);
    expect(check(replica, instance, 8000)).toBe(true);
    expect(check(operator, instance, 8000)).toBe(true);
    expect(check(operator, instance, 5432)).toBe(true);
    expect(check(prometheus, instance, 9187)).toBe(true);
    expect(check(prometheus, poolerPod, 9127)).toBe(true);
    expect(check(prometheus, instance, 5432)).toBe(false);
    for (const from of [gateway, neighbour, intruder]) {
      for (const [to, port] of [
        [poolerPod, 5432],
        [instance, 5432],
        [instance, 8000],
      ] as const) {
        expect(check(from, to, port), `${from.name} → ${to.name}:${port}`).toBe(false);
      }
    }
  });

  it("has Prometheus scrape every instance's exporter and every PgBouncer's", () => {
    const cluster = only("Cluster").metadata.name;
    const pooler = only("Pooler").metadata.name;
    const monitors = ofKind("PodMonitor");
    const scraping = (labels: Record<string, string>) =>
      monitors.filter(
        (monitor) =>
          matchesSelector(spec(monitor).selector, labels) &&
          spec(monitor).podMetricsEndpoints.some(
            (endpoint: { port?: string }) => endpoint.port === "metrics",
          ),
      );
    expect(scraping({ "cnpg.io/cluster": cluster, "cnpg.io/podRole": "instance" })).toHaveLength(1);
    expect(scraping({ "cnpg.io/poolerName": pooler, "cnpg.io/podRole": "pooler" })).toHaveLength(1);
    // The deprecated operator-made PodMonitors are not asked for as well (they would scrape twice).
    expect(spec(only("Cluster")).monitoring?.enablePodMonitor).toBeUndefined();
    expect(spec(only("Pooler")).monitoring?.enablePodMonitor).toBeUndefined();
  });

  it("documents backups and how to restore them, the Pooler and DATABASE_DIRECT_URL", () => {
    const readme = readFileSync(join(ROOT, "deploy/k8s/README.md"), "utf8");
    for (const needle of [
      "plugin-barman-cloud",
      "evalp-db-backup-credentials",
      "bootstrap:",
      "recovery:",
      "externalClusters:",
      "targetTime",
      "evalp-db-pooler-rw",
      "DATABASE_DIRECT_URL",
      "synchronous",
    ]) {
      expect(readme, needle).toContain(needle);
    }
  });
});

describe("the structural checks of the database's custom resources", () => {
  const valid = () => structuredClone(objects.filter((object) => object.metadata) as K8sObject[]);
  const problemsOf = (kind: string, change: (object: K8sObject) => void) => {
    const object = valid().find((candidate) => candidate.kind === kind) as K8sObject;
    change(object);
    return schemaProblems(object).join("\n");
  };

  it("refuse credentials written into the ObjectStore, a five-field schedule and a parameter the operator refuses", () => {
    expect(
      problemsOf("ObjectStore", (store) => {
        spec(store).configuration.s3Credentials.accessKeyId = "AKIAABCDEFGHIJKLMNOP";
      }),
    ).toMatch(/accessKeyId must name a Secret and a key/);
    expect(
      problemsOf("ScheduledBackup", (backup) => {
        spec(backup).schedule = "0 3 * * *";
      }),
    ).toMatch(/six-field cron/);
    expect(
      problemsOf("Pooler", (pooler) => {
        spec(pooler).pgbouncer.parameters.pool_mode = "session";
      }),
    ).toMatch(/pool_mode is not a parameter the operator accepts/);
    expect(
      problemsOf("Cluster", (cluster) => {
        spec(cluster).postgresql.synchronous.number = 3;
        spec(cluster).minSyncReplicas = 1;
      }),
    ).toMatch(/number must be below spec.instances[\s\S]*exclude each other/);
  });
});
