// What the production overlay needs to scale out and to survive the loss of a zone: streams with
// limits that fit the NATS volume and an alert before they are full, the webhooks plane scaled by
// KEDA on its consumer's pending messages, every stateful set and PgBouncer spread over zones
// with a disruption budget, the state layer's alerts, and a connection budget that holds at
// every autoscaler's maximum (docs/configuration.md#stream-limits, docs/operations.md).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema, natsPermissions } from "@evalp/kit";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type BudgetInput, connectionBudget } from "./support/connection-budget.js";
import { findRenderer, type K8sObject } from "./support/kustomize.js";
import { matchesSelector } from "./support/network.js";
import { parsePromql } from "./support/promql.js";
import { evaluatePromql, firing, type Sample } from "./support/promql-eval.js";
import { schemaProblems } from "./support/schemas.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROD = join(ROOT, "deploy/k8s/overlays/prod");
const OPERATIONS = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
const CONFIGURATION = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
const NATS_VALUES = parse(readFileSync(join(PROD, "nats-values.yaml"), "utf8"));
const ZONE = "topology.kubernetes.io/zone";
const SERVICES = ["control", "platform", "interview", "webhooks"] as const;

let objects: K8sObject[];
// Rendering takes seconds on a busy machine.
beforeAll(() => {
  objects = findRenderer().build(PROD);
}, 60_000);

const spec = (object: K8sObject | undefined): Record<string, any> =>
  (object?.spec ?? {}) as Record<string, any>;
const ofKind = (kind: string) => objects.filter((object) => object.kind === kind);
const named = (kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
/** The overlay's settings as the processes parse them (defaults for what it does not set). */
const settings = () =>
  configSchema.parse(
    (ofKind("ConfigMap").find((map) => map.metadata.name.startsWith("evalp-config"))?.data ?? {}) as Record<
      string,
      string
    >,
  );

/** Bytes of a Kubernetes quantity (binary and decimal suffixes). */
function bytes(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?$/.exec(quantity);
  if (!match) throw new Error(`not a quantity: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, K: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(match[1]) * (match[2] ? unit[match[2] as keyof typeof unit] : 1);
}

type Rule = {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};
const rulesOf = (name: string): Rule[] =>
  (spec(named("PrometheusRule", name)).groups as { rules: Rule[] }[]).flatMap((group) => group.rules);
const alert = (rule: string, name: string): Rule => {
  const found = rulesOf(rule).find((each) => each.alert === name);
  if (!found) throw new Error(`no alert ${name} in ${rule}`);
  return found;
};

describe("streams with limits", () => {
  it("gives each stream a max_bytes and max_age whose sum fits below JetStream's store on the NATS volume", () => {
    const config = settings();
    const limits = {
      EVENTS: [config.EVENTS_STREAM_MAX_BYTES, config.EVENTS_STREAM_MAX_AGE_DAYS],
      AUDIT: [config.AUDIT_STREAM_MAX_BYTES, config.AUDIT_STREAM_MAX_AGE_DAYS],
      WEBHOOKS: [config.WEBHOOKS_STREAM_MAX_BYTES, config.WEBHOOKS_STREAM_MAX_AGE_DAYS],
    };
    // Set explicitly in prod, not left to the defaults.
    const data = ofKind("ConfigMap").find((map) => map.metadata.name.startsWith("evalp-config"))
      ?.data as Record<string, string>;
    for (const name of Object.keys(limits)) {
      expect(data[`${name}_STREAM_MAX_BYTES`], name).toMatch(/^\d+$/);
      expect(data[`${name}_STREAM_MAX_AGE_DAYS`], name).toMatch(/^\d+(\.\d+)?$/);
    }
    const total = Object.values(limits).reduce((sum, [maxBytes]) => sum + (maxBytes as number), 0);
    const fileStore = NATS_VALUES.config.jetstream.fileStore;
    const maxSize = bytes(fileStore.maxSize);
    expect(total).toBeLessThanOrEqual(maxSize);
    // The volume holds the store and JetStream's own files beside it.
    expect(maxSize).toBeLessThan(bytes(fileStore.pvc.size));
    // The stream that takes every event keeps a day at least, so a consumer outage of a night
    // loses nothing.
    expect(config.EVENTS_STREAM_MAX_AGE_DAYS).toBeGreaterThanOrEqual(1);
    expect(CONFIGURATION).toContain("### Stream limits");
    for (const name of [
      "EVENTS_STREAM_MAX_BYTES",
      "AUDIT_STREAM_MAX_BYTES",
      "WEBHOOKS_STREAM_MAX_AGE_DAYS",
    ]) {
      expect(CONFIGURATION, name).toContain(name);
    }
  });

  it("alerts at 80 % of a stream's max_bytes and pages at 95 %, per stream, whichever replica reports it", () => {
    const filling = alert("evalp", "EvalpStreamFilling");
    const full = alert("evalp", "EvalpStreamFull");
    const series = (stream: string, pod: string, used: number, max: number): Sample[] => {
      const labels = { job: "evalp", namespace: "evalp", service: "webhooks", pod, stream };
      return [
        { labels: { __name__: "evalp_jetstream_stream_bytes", ...labels }, value: used },
        { labels: { __name__: "evalp_jetstream_stream_max_bytes", ...labels }, value: max },
      ];
    };
    const GiB = 2 ** 30;
    const samples = [
      ...series("EVENTS", "webhooks-a", 0.7 * 32 * GiB, 32 * GiB),
      ...series("EVENTS", "webhooks-b", 0.7 * 32 * GiB, 32 * GiB),
      ...series("AUDIT", "webhooks-a", 0.85 * 8 * GiB, 8 * GiB),
      ...series("WEBHOOKS", "webhooks-a", 0.97 * 2 * GiB, 2 * GiB),
    ];
    expect(firing(filling.expr, samples)).toEqual([
      { namespace: "evalp", stream: "AUDIT" },
      { namespace: "evalp", stream: "WEBHOOKS" },
    ]);
    expect(firing(full.expr, samples)).toEqual([{ namespace: "evalp", stream: "WEBHOOKS" }]);
    // A stream a little under the threshold, or one without a limit reported, does not fire.
    expect(firing(filling.expr, series("EVENTS", "p", 0.79 * GiB, GiB))).toEqual([]);
    expect(firing(filling.expr, series("EVENTS", "p", GiB, GiB).slice(0, 1))).toEqual([]);
    // The value is the fill ratio, which the summary prints as a percentage.
    const value = evaluatePromql(
      filling.expr.replace(/\s*>\s*0\.8\s*$/, ""),
      series("EVENTS", "p", 0.9 * GiB, GiB),
    );
    expect(value.kind === "vector" && value.samples[0]?.value).toBeCloseTo(0.9);
    expect(filling.labels?.severity).toBe("warning");
    expect(full.labels?.severity).toBe("critical");
    expect(OPERATIONS).toMatch(/^#### evalpstreamfilling$/im);
  });
});

describe("the webhooks plane's autoscaling", () => {
  it("is a KEDA ScaledObject on the pending messages of its durable consumer, which replaces the CPU-only autoscaler", () => {
    const scaled = named("ScaledObject", "webhooks");
    expect(schemaProblems(scaled)).toEqual([]);
    expect(spec(scaled).scaleTargetRef).toMatchObject({ kind: "Deployment", name: "webhooks" });
    expect(spec(scaled).minReplicaCount).toBeGreaterThanOrEqual(2);
    expect(spec(scaled).maxReplicaCount).toBeGreaterThan(spec(scaled).minReplicaCount);
    const jetstream = (spec(scaled).triggers as { type: string; metadata: Record<string, string> }[]).find(
      (trigger) => trigger.type === "nats-jetstream",
    );
    const config = settings();
    expect(jetstream?.metadata).toMatchObject({ stream: config.EVENTS_STREAM, consumer: "webhooks" });
    expect(Number(jetstream?.metadata.lagThreshold)).toBeGreaterThan(0);
    // The consumer KEDA reads is the one the webhooks user may consume.
    const webhooksUser = natsPermissions(config).webhooks;
    expect(webhooksUser.publish.allow).toContain(`$JS.API.CONSUMER.INFO.${config.EVENTS_STREAM}.webhooks`);
    // Through the headless Service of the NATS release on its monitoring port.
    expect(jetstream?.metadata.natsServerMonitoringEndpoint).toMatch(
      /^nats-headless\.evalp\.svc[.a-z]*:8222$/,
    );
    expect(
      ofKind("HorizontalPodAutoscaler").filter((hpa) => spec(hpa).scaleTargetRef?.name === "webhooks"),
    ).toEqual([]);
    // KEDA's operator may read the NATS monitoring port.
    const policy = named("NetworkPolicy", "nats-monitoring-keda");
    const ingress = spec(policy).ingress as { from: Record<string, any>[]; ports: { port: number }[] }[];
    expect(ingress.flatMap((rule) => rule.ports.map((port) => port.port))).toEqual([8222]);
    expect(ingress[0]?.from[0]?.namespaceSelector?.matchLabels).toEqual({
      "kubernetes.io/metadata.name": "keda",
    });
  });
});

describe("zones and disruptions", () => {
  it("spreads the Postgres instances, PgBouncer, NATS and every process over zones", () => {
    const zoneSpread = (constraints: { topologyKey?: string; whenUnsatisfiable?: string }[] | undefined) =>
      (constraints ?? []).find((constraint) => constraint.topologyKey === ZONE);
    const cluster = named("Cluster", "evalp-db");
    // Three instances, quorum commits: two in one zone would stop writes with that zone.
    expect(zoneSpread(spec(cluster).topologySpreadConstraints)).toMatchObject({
      maxSkew: 1,
      whenUnsatisfiable: "DoNotSchedule",
      labelSelector: { matchLabels: { "cnpg.io/cluster": "evalp-db", "cnpg.io/podRole": "instance" } },
    });
    const pooler = named("Pooler", "evalp-db-pooler-rw");
    const poolerSpread = spec(pooler).template.spec.topologySpreadConstraints;
    expect(zoneSpread(poolerSpread)).toMatchObject({
      labelSelector: { matchLabels: { "cnpg.io/poolerName": "evalp-db-pooler-rw" } },
    });
    expect(
      poolerSpread.find((each: { topologyKey: string }) => each.topologyKey === "kubernetes.io/hostname"),
    ).toMatchObject({
      whenUnsatisfiable: "DoNotSchedule",
    });
    // NATS: the chart's map of constraints, by topology key.
    expect(NATS_VALUES.podTemplate.topologySpreadConstraints[ZONE]).toMatchObject({
      maxSkew: 1,
      whenUnsatisfiable: "DoNotSchedule",
    });
    for (const deployment of ofKind("Deployment")) {
      expect(
        zoneSpread(spec(deployment).template.spec.topologySpreadConstraints),
        deployment.metadata.name,
      ).toBeDefined();
    }
  });

  it("gives PgBouncer a disruption budget that keeps one of its instances up", () => {
    const pooler = named("Pooler", "evalp-db-pooler-rw");
    const podLabels = {
      "cnpg.io/poolerName": "evalp-db-pooler-rw",
      ...spec(pooler).template.metadata.labels,
    };
    const budgets = ofKind("PodDisruptionBudget").filter((pdb) =>
      matchesSelector(spec(pdb).selector, podLabels),
    );
    expect(budgets.map((pdb) => pdb.metadata.name)).toEqual(["evalp-db-pooler-rw"]);
    const [budget] = budgets;
    expect(schemaProblems(budget as K8sObject)).toEqual([]);
    expect(spec(budget).maxUnavailable).toBeLessThan(spec(pooler).instances);
    // NATS's budget comes from its chart.
    expect(NATS_VALUES.podDisruptionBudget.enabled).toBe(true);
  });
});

/** Metrics of the state layer's exporters that the rule `evalp-state` may name, and their labels. */
const STATE_METRICS = new Map<string, string[]>([
  ["cnpg_pg_replication_in_recovery", []],
  ["cnpg_pg_replication_is_wal_receiver_up", []],
  ["cnpg_pg_replication_lag", []],
  ["cnpg_pg_stat_archiver_last_failed_time", []],
  ["cnpg_pg_stat_archiver_last_archived_time", []],
  ["cnpg_backends_max_tx_duration_seconds", ["datname", "usename", "application_name", "state"]],
  ["cnpg_backends_total", ["datname", "usename", "application_name", "state"]],
  ["cnpg_pg_settings_setting", ["name"]],
  ["barman_cloud_cloudnative_pg_io_last_available_backup_timestamp", []],
  ["cnpg_pgbouncer_pools_cl_waiting", ["database", "user"]],
  ["cnpg_pgbouncer_pools_maxwait", ["database", "user"]],
  ["kubelet_volume_stats_available_bytes", ["persistentvolumeclaim"]],
  ["kubelet_volume_stats_capacity_bytes", ["persistentvolumeclaim"]],
  ["redis_up", []],
  ["redis_evicted_keys_total", []],
  ["redis_memory_used_bytes", []],
  ["redis_memory_max_bytes", []],
]);
const TARGET_LABELS = ["job", "instance", "namespace", "pod", "container", "endpoint", "service"];

describe("the state layer's alerts", () => {
  it("cover Postgres replication, WAL archiving and backups, PgBouncer waits, the NATS volumes and Redis, each valid and documented", () => {
    const rule = named("PrometheusRule", "evalp-state");
    expect(schemaProblems(rule)).toEqual([]);
    const rules = rulesOf("evalp-state");
    const problems: string[] = [];
    for (const each of rules) {
      const where = `alert ${each.alert}`;
      const { errors, names } = parsePromql(each.expr);
      problems.push(...errors.map((error) => `${where}: ${error}`));
      const labels = new Set([
        ...TARGET_LABELS,
        ...names.metrics.flatMap((metric) => STATE_METRICS.get(metric) ?? []),
      ]);
      for (const metric of names.metrics) {
        if (!STATE_METRICS.has(metric))
          problems.push(`${where}: ${metric} is not an exporter metric this rule knows`);
      }
      for (const label of [...names.matchedLabels, ...names.groupingLabels]) {
        if (!labels.has(label)) problems.push(`${where}: no metric of it has the label ${label}`);
      }
      if (!/^Evalp[A-Z][A-Za-z0-9]+$/.test(each.alert)) problems.push(`${where}: name`);
      if (!["warning", "critical"].includes(each.labels?.severity ?? "")) problems.push(`${where}: severity`);
      const runbook = each.annotations?.runbook ?? "";
      if (!new RegExp(`^#### ${runbook.split("#")[1]}$`, "im").test(OPERATIONS)) {
        problems.push(`${where}: runbook ${runbook} is no heading of docs/operations.md`);
      }
      if (!OPERATIONS.includes(`\`${each.alert}\``)) problems.push(`${where}: not in docs/operations.md`);
    }
    expect(problems).toEqual([]);
    const on = (metric: string) =>
      rules.filter((each) => parsePromql(each.expr).names.metrics.includes(metric));
    for (const metric of [
      "cnpg_pg_replication_is_wal_receiver_up",
      "cnpg_pg_replication_lag",
      "cnpg_pg_stat_archiver_last_archived_time",
      "barman_cloud_cloudnative_pg_io_last_available_backup_timestamp",
      "cnpg_pgbouncer_pools_cl_waiting",
      "kubelet_volume_stats_available_bytes",
      "redis_up",
      "redis_evicted_keys_total",
    ]) {
      expect(on(metric), metric).not.toEqual([]);
    }
  });

  it("page when a replica stops streaming and when the last WAL archived is old, not before", () => {
    const notStreaming = alert("evalp-state", "EvalpPostgresReplicaNotStreaming").expr;
    const pod = (name: string, inRecovery: number, receiving: number): Sample[] => [
      {
        labels: { __name__: "cnpg_pg_replication_in_recovery", namespace: "evalp", pod: name },
        value: inRecovery,
      },
      {
        labels: { __name__: "cnpg_pg_replication_is_wal_receiver_up", namespace: "evalp", pod: name },
        value: receiving,
      },
    ];
    const samples = [...pod("evalp-db-1", 0, 0), ...pod("evalp-db-2", 1, 1), ...pod("evalp-db-3", 1, 0)];
    expect(firing(notStreaming, samples).map((labels) => labels.pod)).toEqual(["evalp-db-3"]);

    // The primary archives; replicas report no archiving (0): only the newest counts.
    const stale = alert("evalp-state", "EvalpPostgresWalArchiveStale").expr;
    const now = 1_800_000_000;
    const archived = (times: number[]) =>
      times.map((time, index) => ({
        labels: {
          __name__: "cnpg_pg_stat_archiver_last_archived_time",
          namespace: "evalp",
          pod: `evalp-db-${index + 1}`,
        },
        value: time,
      }));
    const at = (expr: string) => expr.replace("time()", String(now));
    expect(firing(at(stale), archived([now - 120, 0, 0]))).toEqual([]);
    expect(firing(at(stale), archived([now - 1_200, 0, 0]))).toEqual([{ namespace: "evalp" }]);
  });
});

describe("the state layer's dashboard", () => {
  it("is a ConfigMap Grafana's sidecar finds, each panel's queries valid over the exporters' metrics", () => {
    const configMap = named("ConfigMap", "evalp-state-grafana-dashboard");
    expect(configMap.metadata.labels?.grafana_dashboard).toBe("1");
    const data = configMap.data as Record<string, string>;
    const dashboard = JSON.parse(data["evalp-state.json"] ?? "") as {
      uid: string;
      templating: { list: { name: string }[] };
      panels: { id: number; type: string; title: string; targets?: { refId: string; expr: string }[] }[];
    };
    expect(dashboard.uid).toBe("evalp-state");
    const variables = new Set(dashboard.templating.list.map((variable) => variable.name));
    const problems: string[] = [];
    const shown = new Set<string>();
    for (const panel of dashboard.panels.filter((each) => each.type !== "row")) {
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        const where = `panel ${panel.id} ${target.refId}`;
        for (const [, name] of target.expr.matchAll(/\$\{?([a-zA-Z_]+)\}?/g)) {
          if (!name?.startsWith("__") && !variables.has(name ?? ""))
            problems.push(`${where}: $${name} undefined`);
        }
        const concrete = target.expr.replaceAll("$__rate_interval", "5m").replaceAll("$namespace", "evalp");
        const { errors, names } = parsePromql(concrete);
        problems.push(...errors.map((error) => `${where}: ${error}`));
        for (const metric of names.metrics) {
          if (!STATE_METRICS.has(metric))
            problems.push(`${where}: ${metric} is not an exporter metric this rule knows`);
          shown.add(metric);
        }
      }
    }
    expect(problems).toEqual([]);
    // Every series an alert of evalp-state watches has a panel.
    const watched = rulesOf("evalp-state").flatMap((each) => parsePromql(each.expr).names.metrics);
    expect(watched.filter((metric) => !shown.has(metric))).toEqual([]);
  });
});

describe("the connection budget", () => {
  /** The overlay's numbers: the Cluster's max_connections, the Pooler's pools, every autoscaler's maximum with the rollout's surge. */
  function budgetOf(maxReplicasOverride?: number): BudgetInput {
    const cluster = named("Cluster", "evalp-db");
    const parameters = spec(cluster).postgresql.parameters as Record<string, string>;
    const pooler = spec(named("Pooler", "evalp-db-pooler-rw"));
    const pgbouncer = pooler.pgbouncer.parameters as Record<string, string>;
    const config = settings();
    const services = SERVICES.map((name) => {
      const scaler = [...ofKind("HorizontalPodAutoscaler"), ...ofKind("ScaledObject")].find(
        (each) => spec(each).scaleTargetRef?.name === name,
      );
      const max = maxReplicasOverride ?? spec(scaler).maxReplicas ?? spec(scaler).maxReplicaCount;
      expect(max, name).toBeGreaterThan(0);
      // A rollout adds maxSurge pods beside the maximum.
      const surge = String(spec(named("Deployment", name)).strategy?.rollingUpdate?.maxSurge ?? "25%");
      const extra = surge.endsWith("%") ? Math.ceil((max * Number.parseFloat(surge)) / 100) : Number(surge);
      // No direct connection of a replica's own: its outbox relay publishes what its process
      // commits and sweeps through the pool.
      return { name, maxReplicas: max + extra, poolSize: config.DATABASE_POOL_SIZE, directPerReplica: 0 };
    });
    const jobs = ofKind("Job").filter((job) => job.metadata.name.includes("migrate"));
    return {
      maxConnections: Number(parameters.max_connections),
      superuserReserved: Number(parameters.superuser_reserved_connections ?? 3),
      operatorReserved: 10,
      pooler: {
        instances: pooler.instances,
        // A pool per role: each plane connects as its own (the Cluster's managed roles).
        users: (spec(cluster).managed?.roles ?? []).length,
        defaultPoolSize: Number(pgbouncer.default_pool_size),
        reservePoolSize: Number(pgbouncer.reserve_pool_size ?? 0),
        maxClientConn: Number(pgbouncer.max_client_conn),
      },
      services,
      // The migration Job (parallelism 1): its advisory lock's session and the runner's.
      migrations: { jobs: Math.max(1, jobs.length), connectionsPerJob: 2 },
    };
  }

  it("holds at every autoscaler's maximum, surge included, on Postgres and on PgBouncer", () => {
    const budget = connectionBudget(budgetOf());
    expect(budget.problems).toEqual([]);
    // Numbers docs/operations.md states.
    expect(OPERATIONS).toContain(`${budget.server.used} of ${budget.server.limit}`);
  });

  it("does not grow on Postgres with the replicas, and breaks on PgBouncer where docs/operations.md says", () => {
    const at = (replicas: number) => connectionBudget(budgetOf(replicas));
    expect(at(60).server.used).toBe(at(1).server.used);
    const breaks = Array.from({ length: 200 }, (_, i) => i + 1).find(
      (replicas) => at(replicas).problems.length > 0,
    );
    expect(breaks).toBeDefined();
    const budget = at(breaks ?? 0);
    expect(budget.problems.join()).toMatch(/max_client_conn/);
    expect(OPERATIONS).toContain(
      `breaks at ${breaks} replicas of each service (${budget.client.used} client connections`,
    );
  });
});
