import {
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { CronJob, Job } from "kubernetes-models/batch/v1";
import { Ingress, NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import type { K8sObject } from "./kustomize.js";

/** A model class of kubernetes-models: its constructor takes the object, validate() throws. */
type ModelClass = new (data: never) => { validate(): void };

/**
 * The Kubernetes kinds these manifests may use, by apiVersion and kind, each validated against
 * the Kubernetes OpenAPI schema (or, for a CRD, its schema) that kubernetes-models compiled into
 * validators (offline).
 */
const CORE_MODELS: Record<string, ModelClass> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "apps/v1/StatefulSet": StatefulSet,
  "batch/v1/Job": Job,
  "batch/v1/CronJob": CronJob,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
  "rbac.authorization.k8s.io/v1/Role": Role,
  "rbac.authorization.k8s.io/v1/RoleBinding": RoleBinding,
  // The Prometheus Operator's CRDs, as its OpenAPI schemas define them (deploy/k8s/monitoring).
  "monitoring.coreos.com/v1/ServiceMonitor": ServiceMonitor,
  "monitoring.coreos.com/v1/PrometheusRule": PrometheusRule,
};

/** Custom resources (not in core Kubernetes), checked structurally by the function given. */
const CUSTOM_RESOURCES: Record<string, (object: K8sObject) => string[]> = {
  "postgresql.cnpg.io/v1/Cluster": checkCnpgCluster,
  "postgresql.cnpg.io/v1/Pooler": checkCnpgPooler,
  "postgresql.cnpg.io/v1/ScheduledBackup": checkCnpgScheduledBackup,
  "barmancloud.cnpg.io/v1/ObjectStore": checkBarmanObjectStore,
  "monitoring.coreos.com/v1/PodMonitor": checkPodMonitor,
  "keda.sh/v1alpha1/ScaledObject": checkKedaScaledObject,
};

/** Every problem with the object's shape; empty when it is valid. */
export function schemaProblems(object: K8sObject): string[] {
  const where = `${object.kind ?? "?"} ${object.metadata?.name ?? "?"}`;
  const problems = checkObjectMeta(object).map((problem) => `${where}: ${problem}`);
  const key = `${object.apiVersion}/${object.kind}`;
  const Model = CORE_MODELS[key];
  if (Model) {
    try {
      new Model(object as never).validate();
    } catch (error) {
      problems.push(`${where}: ${(error as Error).message}`);
    }
    return problems;
  }
  const custom = CUSTOM_RESOURCES[key];
  if (custom) return [...problems, ...custom(object).map((problem) => `${where}: ${problem}`)];
  return [
    ...problems,
    `${where}: ${key} is neither a known Kubernetes kind nor a known custom resource; add it to tests/deploy/support/schemas.ts`,
  ];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** What the API server would refuse in metadata whatever the kind (the schemas do not say it). */
function checkObjectMeta(object: K8sObject): string[] {
  const problems: string[] = [];
  if (typeof object.apiVersion !== "string" || typeof object.kind !== "string") {
    return ["apiVersion and kind must be strings"];
  }
  const name = object.metadata?.name;
  if (typeof name !== "string" || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    problems.push(`metadata.name ${JSON.stringify(name)} is not a DNS subdomain`);
  }
  const namespace = object.metadata.namespace;
  if (namespace !== undefined && !DNS_LABEL.test(namespace)) {
    problems.push(`metadata.namespace ${JSON.stringify(namespace)} is not a DNS label`);
  }
  for (const [key, value] of Object.entries(object.metadata.labels ?? {})) {
    if (typeof value !== "string" || value.length > 63 || !LABEL_VALUE.test(value)) {
      problems.push(`label ${key} has an invalid value ${JSON.stringify(value)}`);
    }
  }
  return problems;
}

const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;

/**
 * The fields of a CloudNativePG Cluster (postgresql.cnpg.io/v1) that these manifests use, as the
 * CRD defines them; anything else present must at least be an object or a scalar the CRD allows.
 */
function checkCnpgCluster(object: K8sObject): string[] {
  const problems: string[] = [];
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const known = new Set([
    "instances",
    "imageName",
    "primaryUpdateStrategy",
    "bootstrap",
    "postgresql",
    "storage",
    "walStorage",
    "resources",
    "affinity",
    "backup",
    "monitoring",
    "inheritedMetadata",
    "enableSuperuserAccess",
    "description",
    "minSyncReplicas",
    "maxSyncReplicas",
    "plugins",
    "managed",
    "topologySpreadConstraints",
  ]);
  for (const key of Object.keys(spec)) {
    if (!known.has(key)) problems.push(`spec.${key} is not a Cluster field these checks know`);
  }
  // Declarative roles (managed.roles): a name each, and a password only from a Secret by name.
  const roles = (spec.managed as { roles?: unknown } | undefined)?.roles;
  if (spec.managed !== undefined && !Array.isArray(roles)) problems.push("spec.managed.roles must be a list");
  for (const [index, role] of ((Array.isArray(roles) ? roles : []) as Record<string, unknown>[]).entries()) {
    const known = new Set(["name", "ensure", "login", "inRoles", "passwordSecret", "comment", "inherit"]);
    for (const key of Object.keys(role)) {
      if (!known.has(key))
        problems.push(`spec.managed.roles[${index}].${key} is not a field these checks know`);
    }
    if (typeof role.name !== "string" || role.name === "")
      problems.push(`spec.managed.roles[${index}] needs a name`);
    const secret = role.passwordSecret as { name?: unknown } | undefined;
    if (secret !== undefined && (typeof secret.name !== "string" || Object.keys(secret).length !== 1)) {
      problems.push(`spec.managed.roles[${index}].passwordSecret must name a Secret, nothing else`);
    }
  }
  if (!Number.isInteger(spec.instances) || (spec.instances as number) < 1) {
    problems.push("spec.instances must be a positive integer");
  }
  if (spec.imageName !== undefined) {
    const image = String(spec.imageName);
    if (!/:[^/]+$/.test(image) || image.endsWith(":latest")) {
      problems.push(`spec.imageName ${image} must carry a version tag`);
    }
  }
  if (
    spec.primaryUpdateStrategy !== undefined &&
    !["unsupervised", "supervised"].includes(String(spec.primaryUpdateStrategy))
  ) {
    problems.push("spec.primaryUpdateStrategy must be unsupervised or supervised");
  }
  const storage = spec.storage as { size?: unknown } | undefined;
  if (!storage || typeof storage.size !== "string" || !QUANTITY.test(storage.size)) {
    problems.push("spec.storage.size must be a quantity such as 20Gi");
  }
  const initdb = (spec.bootstrap as { initdb?: { database?: unknown; owner?: unknown } } | undefined)?.initdb;
  if (initdb) {
    if (typeof initdb.database !== "string" || typeof initdb.owner !== "string") {
      problems.push("spec.bootstrap.initdb needs database and owner");
    }
  }
  const synchronous = (spec.postgresql as { synchronous?: Record<string, unknown> } | undefined)?.synchronous;
  if (synchronous !== undefined) problems.push(...checkSynchronous(synchronous, spec));
  for (const [index, plugin] of ((spec.plugins as Record<string, unknown>[] | undefined) ?? []).entries()) {
    if (typeof plugin.name !== "string" || plugin.name === "")
      problems.push(`spec.plugins[${index}].name is required`);
    if (plugin.isWALArchiver !== undefined && typeof plugin.isWALArchiver !== "boolean") {
      problems.push(`spec.plugins[${index}].isWALArchiver must be a boolean`);
    }
    problems.push(...stringMap(plugin.parameters, `spec.plugins[${index}].parameters`));
  }
  if (
    spec.backup !== undefined &&
    (spec.plugins as { isWALArchiver?: boolean }[] | undefined)?.some((p) => p.isWALArchiver)
  ) {
    problems.push("spec.backup.barmanObjectStore and a plugin with isWALArchiver exclude each other");
  }
  const parameters = (spec.postgresql as { parameters?: Record<string, unknown> } | undefined)?.parameters;
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (typeof value !== "string") problems.push(`spec.postgresql.parameters.${key} must be a string`);
  }
  const affinity = spec.affinity as { podAntiAffinityType?: unknown } | undefined;
  if (
    affinity?.podAntiAffinityType !== undefined &&
    !["preferred", "required"].includes(String(affinity.podAntiAffinityType))
  ) {
    problems.push("spec.affinity.podAntiAffinityType must be preferred or required");
  }
  const resources = spec.resources as {
    requests?: Record<string, unknown>;
    limits?: Record<string, unknown>;
  };
  for (const [kind, values] of Object.entries({ requests: resources?.requests, limits: resources?.limits })) {
    for (const [key, value] of Object.entries(values ?? {})) {
      if (typeof value !== "string" || !QUANTITY.test(value)) {
        problems.push(`spec.resources.${kind}.${key} must be a quantity`);
      }
    }
  }
  return problems;
}

/** `.spec.postgresql.synchronous` (CloudNativePG 1.24+), which replaces min/maxSyncReplicas. */
function checkSynchronous(synchronous: Record<string, unknown>, spec: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const known = new Set([
    "method",
    "number",
    "maxStandbyNamesFromCluster",
    "standbyNamesPre",
    "standbyNamesPost",
    "dataDurability",
    "failoverQuorum",
  ]);
  for (const key of Object.keys(synchronous)) {
    if (!known.has(key)) problems.push(`spec.postgresql.synchronous.${key} is not a field of the stanza`);
  }
  if (!["any", "first"].includes(String(synchronous.method))) {
    problems.push("spec.postgresql.synchronous.method must be any or first");
  }
  const number = synchronous.number;
  if (!Number.isInteger(number) || (number as number) < 1) {
    problems.push("spec.postgresql.synchronous.number must be a positive integer");
  } else if ((number as number) >= (spec.instances as number)) {
    problems.push(
      "spec.postgresql.synchronous.number must be below spec.instances (a primary and its standbys)",
    );
  }
  if (
    synchronous.dataDurability !== undefined &&
    !["required", "preferred"].includes(String(synchronous.dataDurability))
  ) {
    problems.push("spec.postgresql.synchronous.dataDurability must be required or preferred");
  }
  if (synchronous.failoverQuorum !== undefined && typeof synchronous.failoverQuorum !== "boolean") {
    problems.push("spec.postgresql.synchronous.failoverQuorum must be a boolean");
  }
  if (spec.minSyncReplicas !== undefined || spec.maxSyncReplicas !== undefined) {
    problems.push("spec.minSyncReplicas/maxSyncReplicas and spec.postgresql.synchronous exclude each other");
  }
  return problems;
}

/** Fields absent from `fields`, as problems under `where`. */
function unknownFields(value: Record<string, unknown>, fields: string[], where: string): string[] {
  return Object.keys(value)
    .filter((key) => !fields.includes(key))
    .map((key) => `${where}.${key} is not a field these checks know`);
}

/** A map of strings (PgBouncer parameters, plugin parameters), or nothing. */
function stringMap(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${where} must be a map`];
  return Object.entries(value)
    .filter(([, entry]) => typeof entry !== "string")
    .map(([key]) => `${where}.${key} must be a string`);
}

/** A reference to one key of a Secret: `{ name, key }`. */
function secretKeyRef(value: unknown, where: string): string[] {
  const ref = value as { name?: unknown; key?: unknown } | undefined;
  if (!ref || typeof ref.name !== "string" || !ref.name || typeof ref.key !== "string" || !ref.key) {
    return [`${where} must name a Secret and a key`];
  }
  return unknownFields(ref as Record<string, unknown>, ["name", "key"], where);
}

/** PgBouncer settings CloudNativePG accepts in a Pooler (its admission webhook refuses others). */
const POOLER_PARAMETERS = new Set([
  "application_name_add_host",
  "auth_type",
  "auth_user",
  "autodb_idle_timeout",
  "cancel_wait_timeout",
  "client_idle_timeout",
  "client_login_timeout",
  "client_tls_ciphers",
  "client_tls_sslmode",
  "client_tls13_ciphers",
  "default_pool_size",
  "disable_pqexec",
  "dns_max_ttl",
  "dns_nxdomain_ttl",
  "idle_transaction_timeout",
  "ignore_startup_parameters",
  "listen_backlog",
  "log_connections",
  "log_disconnections",
  "log_pooler_errors",
  "log_stats",
  "max_client_conn",
  "max_db_connections",
  "max_packet_size",
  "max_prepared_statements",
  "max_user_connections",
  "min_pool_size",
  "pkt_buf",
  "query_timeout",
  "query_wait_timeout",
  "reserve_pool_size",
  "reserve_pool_timeout",
  "sbuf_loopcnt",
  "server_check_delay",
  "server_check_query",
  "server_connect_timeout",
  "server_fast_close",
  "server_idle_timeout",
  "server_lifetime",
  "server_login_retry",
  "server_reset_query",
  "server_reset_query_always",
  "server_round_robin",
  "server_tls_ciphers",
  "server_tls13_ciphers",
  "server_tls_protocols",
  "server_tls_sslmode",
  "stats_period",
  "suspend_timeout",
  "tcp_defer_accept",
  "tcp_socket_buffer",
  "tcp_keepalive",
  "tcp_keepcnt",
  "tcp_keepidle",
  "tcp_keepintvl",
  "tcp_user_timeout",
  "track_extra_parameters",
  "verbose",
]);

/** A CloudNativePG Pooler (postgresql.cnpg.io/v1): PgBouncer in front of a Cluster's Service. */
function checkCnpgPooler(object: K8sObject): string[] {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const problems = unknownFields(
    spec,
    [
      "cluster",
      "type",
      "instances",
      "template",
      "pgbouncer",
      "deploymentStrategy",
      "monitoring",
      "serviceTemplate",
      "serviceAccountName",
    ],
    "spec",
  );
  const cluster = spec.cluster as { name?: unknown } | undefined;
  if (typeof cluster?.name !== "string" || !cluster.name) problems.push("spec.cluster.name is required");
  if (cluster?.name === object.metadata.name) problems.push("a Pooler may not be named as its Cluster");
  if (spec.type !== undefined && !["rw", "ro", "r"].includes(String(spec.type))) {
    problems.push("spec.type must be rw, ro or r");
  }
  if (spec.instances !== undefined && (!Number.isInteger(spec.instances) || (spec.instances as number) < 0)) {
    problems.push("spec.instances must be a non-negative integer");
  }
  const pgbouncer = spec.pgbouncer as Record<string, unknown> | undefined;
  if (!pgbouncer || typeof pgbouncer !== "object") return [...problems, "spec.pgbouncer is required"];
  problems.push(
    ...unknownFields(
      pgbouncer,
      [
        "poolMode",
        "serverTLSSecret",
        "serverCASecret",
        "clientCASecret",
        "clientTLSSecret",
        "authQuerySecret",
        "authQuery",
        "parameters",
        "pg_hba",
        "paused",
        "image",
        "imageCatalogRef",
      ],
      "spec.pgbouncer",
    ),
  );
  if (pgbouncer.poolMode !== undefined && !["session", "transaction"].includes(String(pgbouncer.poolMode))) {
    problems.push("spec.pgbouncer.poolMode must be session or transaction");
  }
  problems.push(...stringMap(pgbouncer.parameters, "spec.pgbouncer.parameters"));
  for (const key of Object.keys((pgbouncer.parameters as Record<string, unknown> | undefined) ?? {})) {
    if (!POOLER_PARAMETERS.has(key))
      problems.push(`spec.pgbouncer.parameters.${key} is not a parameter the operator accepts`);
  }
  const containers = (spec.template as { spec?: { containers?: { name?: unknown }[] } } | undefined)?.spec
    ?.containers;
  if (
    spec.template !== undefined &&
    (!Array.isArray(containers) || containers.some((c) => typeof c.name !== "string"))
  ) {
    problems.push("spec.template.spec.containers must be a list of named containers");
  }
  return problems;
}

/** A CloudNativePG ScheduledBackup (postgresql.cnpg.io/v1). */
function checkCnpgScheduledBackup(object: K8sObject): string[] {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const problems = unknownFields(
    spec,
    [
      "suspend",
      "immediate",
      "schedule",
      "cluster",
      "backupOwnerReference",
      "target",
      "method",
      "pluginConfiguration",
      "online",
      "onlineConfiguration",
    ],
    "spec",
  );
  // Six fields, seconds first (robfig/cron), unlike a CronJob's five.
  if (typeof spec.schedule !== "string" || spec.schedule.trim().split(/\s+/).length !== 6) {
    problems.push("spec.schedule must be a six-field cron expression (seconds first)");
  }
  const cluster = spec.cluster as { name?: unknown } | undefined;
  if (typeof cluster?.name !== "string" || !cluster.name) problems.push("spec.cluster.name is required");
  if (
    spec.method !== undefined &&
    !["barmanObjectStore", "volumeSnapshot", "plugin"].includes(String(spec.method))
  ) {
    problems.push("spec.method must be barmanObjectStore, volumeSnapshot or plugin");
  }
  if (
    spec.method === "plugin" &&
    typeof (spec.pluginConfiguration as { name?: unknown } | undefined)?.name !== "string"
  ) {
    problems.push("spec.pluginConfiguration.name is required with method plugin");
  }
  if (spec.target !== undefined && !["primary", "prefer-standby"].includes(String(spec.target))) {
    problems.push("spec.target must be primary or prefer-standby");
  }
  if (
    spec.backupOwnerReference !== undefined &&
    !["none", "self", "cluster"].includes(String(spec.backupOwnerReference))
  ) {
    problems.push("spec.backupOwnerReference must be none, self or cluster");
  }
  return problems;
}

/** The Barman Cloud plugin's ObjectStore (barmancloud.cnpg.io/v1): where WAL and base backups go. */
function checkBarmanObjectStore(object: K8sObject): string[] {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const problems = unknownFields(
    spec,
    ["configuration", "retentionPolicy", "instanceSidecarConfiguration"],
    "spec",
  );
  if (spec.retentionPolicy !== undefined && !/^[1-9][0-9]*[dwm]$/.test(String(spec.retentionPolicy))) {
    problems.push("spec.retentionPolicy must be a count of days, weeks or months (30d)");
  }
  const configuration = spec.configuration as Record<string, unknown> | undefined;
  if (!configuration || typeof configuration !== "object")
    return [...problems, "spec.configuration is required"];
  problems.push(
    ...unknownFields(
      configuration,
      [
        "destinationPath",
        "endpointURL",
        "endpointCA",
        "s3Credentials",
        "azureCredentials",
        "googleCredentials",
        "wal",
        "data",
        "tags",
        "historyTags",
      ],
      "spec.configuration",
    ),
  );
  if (configuration.serverName !== undefined)
    problems.push("spec.configuration.serverName must be left empty");
  if (
    typeof configuration.destinationPath !== "string" ||
    !/^(s3|gs|https?):\/\/\S+$/.test(configuration.destinationPath)
  ) {
    problems.push("spec.configuration.destinationPath must be an object store URL");
  }
  const s3 = configuration.s3Credentials as Record<string, unknown> | undefined;
  if (s3) {
    if (s3.inheritFromIAMRole !== true) {
      problems.push(...secretKeyRef(s3.accessKeyId, "spec.configuration.s3Credentials.accessKeyId"));
      problems.push(...secretKeyRef(s3.secretAccessKey, "spec.configuration.s3Credentials.secretAccessKey"));
    }
    if (s3.sessionToken !== undefined)
      problems.push(...secretKeyRef(s3.sessionToken, "spec.configuration.s3Credentials.sessionToken"));
    if (s3.region !== undefined)
      problems.push(...secretKeyRef(s3.region, "spec.configuration.s3Credentials.region"));
  }
  const compressions = ["bzip2", "gzip", "lz4", "snappy", "xz", "zstd"];
  for (const part of ["wal", "data"] as const) {
    const compression = (configuration[part] as { compression?: unknown } | undefined)?.compression;
    if (compression !== undefined && !compressions.includes(String(compression))) {
      problems.push(`spec.configuration.${part}.compression must be one of ${compressions.join(", ")}`);
    }
  }
  return problems;
}

/** A Prometheus Operator PodMonitor (monitoring.coreos.com/v1). */
function checkPodMonitor(object: K8sObject): string[] {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const problems: string[] = [];
  const selector = spec.selector as { matchLabels?: unknown; matchExpressions?: unknown } | undefined;
  if (!selector || (selector.matchLabels === undefined && selector.matchExpressions === undefined)) {
    problems.push("spec.selector must select pods");
  }
  problems.push(...stringMap(selector?.matchLabels, "spec.selector.matchLabels"));
  const endpoints = spec.podMetricsEndpoints as { port?: unknown; portNumber?: unknown }[] | undefined;
  if (!Array.isArray(endpoints) || endpoints.length === 0) {
    problems.push("spec.podMetricsEndpoints must list at least one endpoint");
  } else {
    endpoints.forEach((endpoint, index) => {
      if (typeof endpoint.port !== "string" && typeof endpoint.portNumber !== "number") {
        problems.push(`spec.podMetricsEndpoints[${index}] must name a port`);
      }
    });
  }
  return problems;
}

/** KEDA's trigger types this repository uses, and the metadata each requires. */
const KEDA_TRIGGERS: Record<string, string[]> = {
  "nats-jetstream": ["natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold"],
  cpu: ["value"],
  memory: ["value"],
};

/** A KEDA ScaledObject (keda.sh/v1alpha1): what scales a Deployment, on which triggers. */
function checkKedaScaledObject(object: K8sObject): string[] {
  const spec = object.spec as Record<string, unknown> | undefined;
  if (!spec || typeof spec !== "object") return ["spec is required"];
  const problems = unknownFields(
    spec,
    [
      "scaleTargetRef",
      "minReplicaCount",
      "maxReplicaCount",
      "idleReplicaCount",
      "pollingInterval",
      "cooldownPeriod",
      "initialCooldownPeriod",
      "advanced",
      "fallback",
      "triggers",
    ],
    "spec",
  );
  const target = spec.scaleTargetRef as { name?: unknown } | undefined;
  if (typeof target?.name !== "string" || !target.name) problems.push("spec.scaleTargetRef.name is required");
  for (const field of ["minReplicaCount", "maxReplicaCount", "pollingInterval", "cooldownPeriod"]) {
    const value = spec[field];
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)) {
      problems.push(`spec.${field} must be a non-negative integer`);
    }
  }
  const triggers = spec.triggers as {
    type?: unknown;
    metadata?: Record<string, unknown>;
    metricType?: unknown;
  }[];
  if (!Array.isArray(triggers) || triggers.length === 0)
    return [...problems, "spec.triggers must not be empty"];
  for (const [index, trigger] of triggers.entries()) {
    const where = `spec.triggers[${index}]`;
    const required = KEDA_TRIGGERS[String(trigger.type)];
    if (!required) {
      problems.push(`${where}.type ${String(trigger.type)} is not a trigger this repository knows`);
      continue;
    }
    problems.push(...stringMap(trigger.metadata, `${where}.metadata`));
    for (const key of required) {
      if (typeof trigger.metadata?.[key] !== "string" || trigger.metadata[key] === "") {
        problems.push(`${where}.metadata.${key} is required`);
      }
    }
    if (
      trigger.metricType !== undefined &&
      !["Utilization", "AverageValue", "Value"].includes(String(trigger.metricType))
    ) {
      problems.push(`${where}.metricType must be Utilization, AverageValue or Value`);
    }
  }
  return problems;
}
