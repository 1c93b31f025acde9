import { randomUUID } from "node:crypto";
import type { Attributes, AttributeValue } from "@opentelemetry/api";

/*
 * The OpenTelemetry semantic conventions the platform's spans and resource follow
 * (docs/operations.md#tracing): the stable HTTP and RPC conventions and the messaging ones, as the
 * semantic conventions 1.45 name them. The names are written out here rather than imported: they
 * are wire names, which a dashboard or an alert queries, so they must not change with a package.
 *
 * `OTEL_SEMCONV_STABILITY_OPT_IN` (comma-separated, as the conventions' migration guides define
 * it) chooses, per domain, which names a span carries: `http` or `rpc` the current ones only (also
 * the default), `http/dup` or `rpc/dup` the current ones and the older experimental ones, for
 * dashboards still on those.
 */

/** Which names of a domain's conventions spans carry. */
export type Stability = { current: true; old: boolean };

/** The names each domain's spans carry, from `OTEL_SEMCONV_STABILITY_OPT_IN`. */
export type Conventions = { http: Stability; rpc: Stability };

export function parseStabilityOptIn(optIn: string | undefined): Conventions {
  const entries = new Set(
    (optIn ?? "")
      .split(",")
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );
  return {
    http: { current: true, old: entries.has("http/dup") },
    rpc: { current: true, old: entries.has("rpc/dup") },
  };
}

/** The older experimental HTTP names, and the current name each is copied from (under `http/dup`). */
const OLD_HTTP_NAMES: ReadonlyArray<readonly [current: string, old: string]> = [
  ["http.request.method", "http.method"],
  ["http.response.status_code", "http.status_code"],
  ["url.full", "http.url"],
  ["url.scheme", "http.scheme"],
  ["user_agent.original", "http.user_agent"],
  ["network.protocol.version", "http.flavor"],
];

/**
 * The older names of a span's current HTTP attributes (`http/dup`): `http.method`,
 * `http.status_code`, `http.target`, `net.host.name`/`net.peer.name`, … Spans without HTTP
 * attributes get none.
 */
export function oldHttpAttributes(current: Attributes, server: boolean): Attributes {
  if (current["http.request.method"] === undefined) return {};
  const old: Attributes = {};
  for (const [name, oldName] of OLD_HTTP_NAMES) {
    const value = current[name];
    if (value !== undefined) old[oldName] = value;
  }
  const path = current["url.path"];
  if (typeof path === "string") {
    const query = current["url.query"];
    old["http.target"] = typeof query === "string" && query ? `${path}?${query}` : path;
  }
  const host = current["server.address"];
  const port = current["server.port"];
  if (host !== undefined) old[server ? "net.host.name" : "net.peer.name"] = host;
  if (port !== undefined) old[server ? "net.host.port" : "net.peer.port"] = port;
  return old;
}

/** A Connect RPC, as its span describes it. */
export type RpcCall = { service: string; method: string; url?: string };

/**
 * The attributes of a Connect RPC's span: `rpc.system.name` `connectrpc`, `rpc.method` the fully
 * qualified `<package>.<Service>/<Method>`, and on a client span the server it called
 * (`server.address`, `server.port`). With `rpc/dup`, also the older `rpc.system` `connect_rpc` and
 * `rpc.service`; the older bare `rpc.method` (`GetApp`) shares its name with the current one, which
 * keeps it (the older dashboards find the method as the part after `/`).
 */
export function rpcAttributes(call: RpcCall, stability: Stability): Attributes {
  const attributes: Attributes = {
    "rpc.system.name": "connectrpc",
    "rpc.method": `${call.service}/${call.method}`,
  };
  if (call.url) {
    const url = URL.parse(call.url);
    if (url) {
      attributes["server.address"] = url.hostname;
      attributes["server.port"] = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    }
  }
  if (stability.old) {
    attributes["rpc.system"] = "connect_rpc";
    attributes["rpc.service"] = call.service;
  }
  return attributes;
}

/**
 * The attributes of a failed RPC: `rpc.status_code` and `error.type`, the Connect code
 * (`not_found`, …); with `rpc/dup`, also the older `rpc.connect_rpc.error_code`.
 */
export function rpcErrorAttributes(code: string, stability: Stability): Attributes {
  return {
    "rpc.status_code": code,
    "error.type": code,
    ...(stability.old && { "rpc.connect_rpc.error_code": code }),
  };
}

/**
 * Parses `OTEL_RESOURCE_ATTRIBUTES` as the OpenTelemetry specification defines it: `key=value`
 * pairs separated by commas, surrounding spaces ignored, keys and values percent-decoded. Null when
 * the value is not of that form (an entry without `=`, an empty key, a bad percent-escape): the
 * specification discards the whole value then, and the configuration refuses it at start.
 */
export function parseResourceAttributes(value: string | undefined): Record<string, string> | null {
  const attributes: Record<string, string> = {};
  if (!value?.trim()) return attributes;
  for (const entry of value.split(",")) {
    if (!entry.trim()) continue;
    const at = entry.indexOf("=");
    if (at < 0) return null;
    try {
      const key = decodeURIComponent(entry.slice(0, at).trim());
      if (!key) return null;
      attributes[key] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      return null;
    }
  }
  return attributes;
}

/** What a process's resource is made of. */
export type ResourceSettings = {
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_RESOURCE_ATTRIBUTES?: string | undefined;
  K8S_POD_NAME?: string | undefined;
  K8S_NAMESPACE_NAME?: string | undefined;
  K8S_NODE_NAME?: string | undefined;
};

/**
 * The resource of a process's spans: `OTEL_RESOURCE_ATTRIBUTES`, then the pod's Kubernetes names
 * (the Deployments pass them from the downward API), then `service.name` (OTEL_SERVICE_NAME, else
 * the process's name) over all of them. `service.version` and `service.instance.id` are the
 * platform's version and a new UUID unless `OTEL_RESOURCE_ATTRIBUTES` names them.
 */
export function resourceAttributes(
  settings: ResourceSettings,
  name: string,
  version: string,
): Record<string, AttributeValue> {
  const given = parseResourceAttributes(settings.OTEL_RESOURCE_ATTRIBUTES) ?? {};
  const kubernetes: Record<string, string> = {};
  if (settings.K8S_POD_NAME) kubernetes["k8s.pod.name"] = settings.K8S_POD_NAME;
  if (settings.K8S_NAMESPACE_NAME) kubernetes["k8s.namespace.name"] = settings.K8S_NAMESPACE_NAME;
  if (settings.K8S_NODE_NAME) kubernetes["k8s.node.name"] = settings.K8S_NODE_NAME;
  return {
    "service.version": version,
    "service.instance.id": randomUUID(),
    ...given,
    ...kubernetes,
    "service.name": settings.OTEL_SERVICE_NAME ?? name,
  };
}
