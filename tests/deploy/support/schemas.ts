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
  ]);
  for (const key of Object.keys(spec)) {
    if (!known.has(key)) problems.push(`spec.${key} is not a Cluster field these checks know`);
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
