// The monitoring of deploy/k8s/monitoring, as the prod overlay renders it: the ServiceMonitor,
// the alerts and the Grafana dashboard validate against their schemas (the Prometheus Operator's
// CRDs, Grafana's dashboard model), every PromQL expression parses with Prometheus' grammar, and
// every metric they name is one the processes register (packages/kit/src/telemetry/metric-catalog.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { METRICS } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { findRenderer, type K8sObject } from "./support/kustomize.js";
import { parsePromql } from "./support/promql.js";
import { schemaProblems } from "./support/schemas.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const K8S = join(ROOT, "deploy/k8s");
const OPERATIONS = readFileSync(join(ROOT, "docs/operations.md"), "utf8");

/** The processes and their ops ports (README, Configuration). */
const OPS_PORTS = { gateway: 9080, control: 9081, platform: 9082, interview: 9083, webhooks: 9084 };

/** Labels Prometheus (and the Prometheus Operator) adds to every series of a target. */
const TARGET_LABELS = ["job", "instance", "namespace", "service", "pod", "container", "endpoint"];

/** Every metric the processes register, and the labels each has, by the names PromQL sees. */
const KNOWN = new Map<string, string[]>([["up", []]]);
for (const metric of Object.values(METRICS)) {
  const labels = [...metric.labelNames];
  if (metric.type === "histogram") {
    KNOWN.set(`${metric.name}_bucket`, [...labels, "le"]);
    KNOWN.set(`${metric.name}_count`, labels);
    KNOWN.set(`${metric.name}_sum`, labels);
  } else {
    KNOWN.set(metric.name, labels);
  }
}

let rendered: Record<string, K8sObject[]> | undefined;
function render(overlay: "dev" | "prod"): K8sObject[] {
  const renderer = findRenderer();
  rendered ??= {};
  rendered[overlay] ??= renderer.build(join(K8S, "overlays", overlay));
  return rendered[overlay];
}

const only = (objects: K8sObject[], kind: string) => {
  const found = objects.filter((object) => object.kind === kind);
  expect(
    found.map((object) => object.metadata.name),
    kind,
  ).toHaveLength(1);
  return found[0] as K8sObject;
};

/**
 * The platform's PrometheusRule `evalp` (deploy/k8s/monitoring). The prod overlay has another,
 * `evalp-state`, on the exporters of the state layer: tests/deploy/scale-out.test.ts.
 */
const platformRule = (objects: K8sObject[]): K8sObject => {
  const found = objects.filter(
    (object) => object.kind === "PrometheusRule" && object.metadata.name === "evalp",
  );
  expect(found).toHaveLength(1);
  return found[0] as K8sObject;
};

/**
 * What is wrong with an expression: a syntax error, a metric no process registers, a label its
 * metrics do not have (matched or grouped by). Grafana's variables are given values first.
 */
function exprProblems(where: string, expr: string): string[] {
  const concrete = expr.replaceAll("$__rate_interval", "5m").replaceAll("$namespace", "evalp");
  const { errors, names } = parsePromql(concrete);
  const problems = errors.map((error) => `${where}: ${error}`);
  if (names.metrics.length === 0) problems.push(`${where}: names no metric`);
  const labels = new Set(TARGET_LABELS);
  for (const metric of names.metrics) {
    const known = KNOWN.get(metric);
    if (!known) problems.push(`${where}: ${metric} is not a metric the processes register`);
    for (const label of known ?? []) labels.add(label);
  }
  for (const label of [...names.matchedLabels, ...names.groupingLabels]) {
    if (!labels.has(label)) problems.push(`${where}: no metric of it has the label ${label}`);
  }
  return problems;
}

/** The labels an alert's result keeps: its grouping labels when it aggregates, else every label of its metrics. */
function resultLabels(expr: string): Set<string> {
  const { names } = parsePromql(expr);
  if (names.groupingLabels.length > 0) return new Set(names.groupingLabels);
  return new Set([...TARGET_LABELS, ...names.metrics.flatMap((metric) => KNOWN.get(metric) ?? [])]);
}

type Rule = {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};
type Panel = {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type?: string; uid?: string };
  targets?: { refId?: string; expr?: string; datasource?: { type?: string; uid?: string } }[];
  panels?: Panel[];
};

// Rendering an overlay (kustomize) takes seconds on a busy machine.
describe("deploy/k8s/monitoring", { timeout: 60_000 }, () => {
  it("is a component the prod overlay lists; dev, without the operator's CRDs, does not", () => {
    const component = parse(readFileSync(join(K8S, "monitoring/kustomization.yaml"), "utf8"));
    expect(component.kind).toBe("Component");
    const prod = parse(readFileSync(join(K8S, "overlays/prod/kustomization.yaml"), "utf8"));
    expect(prod.components).toContain("../../monitoring");
    const dev = render("dev");
    expect(dev.filter((object) => object.apiVersion.startsWith("monitoring.coreos.com/"))).toEqual([]);
  });

  it("renders in prod a ServiceMonitor, a PrometheusRule and a dashboard ConfigMap, each valid against its schema", () => {
    const objects = render("prod");
    const monitoring = [
      only(objects, "ServiceMonitor"),
      platformRule(objects),
      // The platform's dashboard (the prod overlay adds the state layer's: scale-out.test.ts).
      ...objects.filter(
        (object) =>
          object.metadata.labels?.grafana_dashboard === "1" &&
          object.metadata.name === "evalp-grafana-dashboard",
      ),
    ];
    expect(monitoring).toHaveLength(3);
    expect(monitoring.flatMap(schemaProblems)).toEqual([]);
    // The CRD schemas are strict: what they refuse is refused here too.
    const broken = structuredClone(only(objects, "ServiceMonitor"));
    (broken.spec as { endpoints: { interval: string }[] }).endpoints[0] = { interval: "30 seconds" };
    expect(schemaProblems(broken).join()).toMatch(/interval must match pattern/);
  });

  it("scrapes every process's ops port through its Service, as job evalp, keeping the processes' service label", () => {
    const objects = render("prod");
    const monitor = only(objects, "ServiceMonitor");
    const spec = monitor.spec as {
      jobLabel?: string;
      namespaceSelector?: unknown;
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string; path?: string; honorLabels?: boolean; interval?: string }[];
    };
    expect(spec.namespaceSelector, "its own namespace only").toBeUndefined();
    expect(spec.endpoints).toHaveLength(1);
    const [endpoint] = spec.endpoints;
    expect(endpoint).toMatchObject({ port: "ops", path: "/metrics", honorLabels: true });
    const selected = objects.filter(
      (object) =>
        object.kind === "Service" &&
        Object.entries(spec.selector.matchLabels).every(
          ([key, value]) => object.metadata.labels?.[key] === value,
        ),
    );
    expect(selected.map((service) => service.metadata.name).sort()).toEqual(Object.keys(OPS_PORTS).sort());
    for (const service of selected) {
      // The job is the value of jobLabel on the Service: the same for all five.
      expect(service.metadata.labels?.[spec.jobLabel ?? ""], service.metadata.name).toBe("evalp");
      const ports = (service.spec as { ports: { name: string; port: number }[] }).ports;
      const ops = ports.find((port) => port.name === endpoint?.port);
      expect(ops?.port, service.metadata.name).toBe(
        OPS_PORTS[service.metadata.name as keyof typeof OPS_PORTS],
      );
    }
  });

  it("alerts on what an operator needs first, every expression valid PromQL over registered metrics", () => {
    const rule = platformRule(render("prod"));
    const groups = (rule.spec as { groups: { name: string; rules: Rule[] }[] }).groups;
    const rules = groups.flatMap((group) => group.rules);
    const alerts = rules.filter((each) => each.alert !== undefined);
    expect(alerts.length).toBe(rules.length);
    expect(new Set(groups.map((group) => group.name)).size).toBe(groups.length);
    expect(new Set(alerts.map((alert) => alert.alert)).size).toBe(alerts.length);

    const problems = alerts.flatMap((alert) => exprProblems(`alert ${alert.alert}`, alert.expr));
    expect(problems).toEqual([]);
    // A broken expression or an unknown metric is caught.
    expect(exprProblems("x", "sum(rate(evalp_outbox_published_total[5m])")).not.toEqual([]);
    expect(exprProblems("x", "evalp_outbox_lagg_seconds > 60")).not.toEqual([]);
    expect(exprProblems("x", "max by (shema) (evalp_outbox_lag_seconds) > 60")).not.toEqual([]);

    for (const alert of alerts) {
      const where = `alert ${alert.alert}`;
      expect(alert.alert, where).toMatch(/^Evalp[A-Z][A-Za-z0-9]+$/);
      expect(["warning", "critical"], where).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary, where).toEqual(expect.any(String));
      expect(alert.annotations?.description, where).toEqual(expect.any(String));
      // Its runbook line is in docs/operations.md, under a heading with the alert's name.
      const runbook = alert.annotations?.runbook ?? "";
      expect(runbook, where).toMatch(/^docs\/operations\.md#evalp[a-z0-9]+$/);
      expect(OPERATIONS, where).toMatch(new RegExp(`^#### ${runbook.split("#")[1]}$`, "im"));
      // The labels its annotations print are labels its result has.
      const kept = resultLabels(alert.expr);
      const printed = [
        ...Object.values(alert.annotations ?? {})
          .join("\n")
          .matchAll(/\$labels\.([a-zA-Z_]+)/g),
      ].map((match) => match[1] as string);
      for (const label of printed) expect(kept.has(label), `${where} prints $labels.${label}`).toBe(true);
    }

    // The alerts an operator needs first, each on the metric that says it.
    const on = (metric: string, also: RegExp = /./) =>
      alerts.filter(
        (alert) => parsePromql(alert.expr).names.metrics.includes(metric) && also.test(alert.expr),
      );
    expect(on("evalp_outbox_lag_seconds"), "outbox lag").not.toEqual([]);
    expect(on("evalp_webhook_dead_letters_total", /increase|rate/), "dead-letter rate").not.toEqual([]);
    expect(on("http_request_duration_seconds_count", /status=~"5\.\."/), "5xx ratio").not.toEqual([]);
    expect(on("evalp_readiness_changes_total", /increase|rate/), "readiness flapping").not.toEqual([]);
    expect(on("up", /== 0/), "targets down").not.toEqual([]);
  });

  it("has a Grafana dashboard of every platform metric, its panels on the data source variable with valid queries", () => {
    const configMap = render("prod").find(
      (object) =>
        object.metadata.labels?.grafana_dashboard === "1" &&
        object.metadata.name === "evalp-grafana-dashboard",
    );
    const data = (configMap?.data ?? {}) as Record<string, string>;
    expect(Object.keys(data)).toEqual(["evalp.json"]);
    const dashboard = JSON.parse(data["evalp.json"] ?? "") as {
      uid: string;
      title: string;
      schemaVersion: number;
      templating: { list: { name: string; type: string; query?: unknown }[] };
      panels: Panel[];
    };
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.title).toEqual(expect.any(String));
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const variables = new Map(dashboard.templating.list.map((variable) => [variable.name, variable]));
    expect(variables.get("datasource")).toMatchObject({ type: "datasource", query: "prometheus" });

    const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
    const problems: string[] = [];
    const used = new Set<string>();
    const ids = new Set<number>();
    for (const panel of panels) {
      const where = `panel ${panel.id} "${panel.title}"`;
      if (!Number.isInteger(panel.id) || ids.has(panel.id)) problems.push(`${where}: id missing or repeated`);
      ids.add(panel.id);
      const { x, y, w, h } = panel.gridPos ?? {};
      if (![x, y, w, h].every(Number.isInteger) || x < 0 || w < 1 || h < 1 || x + w > 24) {
        problems.push(`${where}: gridPos outside Grafana's 24 columns`);
      }
      if (!panel.title) problems.push(`${where}: no title`);
      if (panel.type === "row") continue;
      if (!["timeseries", "stat", "gauge", "bargauge", "table"].includes(panel.type)) {
        problems.push(`${where}: type ${panel.type} is not a Grafana panel type this dashboard uses`);
      }
      // Grafana's own syntax for the data source variable, not a template string.
      const prometheus = { type: "prometheus", uid: ["$", "{datasource}"].join("") };
      if (JSON.stringify(panel.datasource) !== JSON.stringify(prometheus)) {
        problems.push(`${where}: datasource is not the Prometheus data source variable`);
      }
      if (!panel.targets?.length) problems.push(`${where}: no targets`);
      const refIds = new Set<string>();
      for (const target of panel.targets ?? []) {
        if (!target.refId || refIds.has(target.refId)) problems.push(`${where}: refId missing or repeated`);
        refIds.add(target.refId ?? "");
        if (typeof target.expr !== "string") {
          problems.push(`${where}: a target has no expr`);
          continue;
        }
        problems.push(...exprProblems(`${where} ${target.refId}`, target.expr));
        for (const metric of parsePromql(target.expr.replaceAll("$__rate_interval", "5m")).names.metrics) {
          used.add(metric.replace(/_(bucket|count|sum)$/, ""));
        }
        for (const [, name] of target.expr.matchAll(/\$\{?([a-zA-Z_]+)\}?/g)) {
          if (!name?.startsWith("__") && !variables.has(name ?? "")) {
            problems.push(`${where}: variable $${name} is not defined`);
          }
        }
      }
    }
    // Panels do not overlap.
    const placed = panels.map((panel) => panel.gridPos);
    for (const [i, a] of placed.entries()) {
      for (const b of placed.slice(i + 1)) {
        if (a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h) {
          problems.push(`panels at ${JSON.stringify(a)} and ${JSON.stringify(b)} overlap`);
        }
      }
    }
    expect(problems).toEqual([]);
    const missing = Object.values(METRICS)
      .map((metric) => metric.name)
      .filter((name) => !used.has(name));
    expect(missing, "metrics no panel shows").toEqual([]);
  });

  it("documents every metric, its labels, and every alert in docs/operations.md", () => {
    for (const metric of Object.values(METRICS)) {
      const row = OPERATIONS.split("\n").find((line) => line.startsWith(`| \`${metric.name}\``));
      expect(row, metric.name).toBeDefined();
      for (const label of metric.labelNames) expect(row, `${metric.name} ${label}`).toContain(`\`${label}\``);
    }
    const rule = platformRule(render("prod"));
    for (const group of (rule.spec as { groups: { rules: Rule[] }[] }).groups) {
      for (const alert of group.rules) expect(OPERATIONS, alert.alert).toContain(`\`${alert.alert}\``);
    }
    const readme = readFileSync(join(K8S, "README.md"), "utf8");
    for (const needle of ["monitoring/", "ServiceMonitor", "PrometheusRule", "grafana_dashboard"]) {
      expect(readme, needle).toContain(needle);
    }
  });
});
