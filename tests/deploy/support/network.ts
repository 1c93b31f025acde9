import type { K8sObject } from "./kustomize.js";

/**
 * Evaluates Kubernetes NetworkPolicies (networking.k8s.io/v1) the way a conforming network plugin
 * does, for one connection at a time: a pod is isolated in a direction when a policy of that
 * type selects it, and then a connection is allowed only when some rule of those policies admits
 * the peer and the port. Both ends must allow: the source's egress and the destination's ingress.
 */

type Labels = Record<string, string>;
type LabelSelector = {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};
type PolicyPort = { protocol?: string; port?: number | string; endPort?: number };
type PolicyPeer = {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
};
type PolicySpec = {
  podSelector: LabelSelector;
  policyTypes?: ("Ingress" | "Egress")[];
  ingress?: { from?: PolicyPeer[]; ports?: PolicyPort[] }[];
  egress?: { to?: PolicyPeer[]; ports?: PolicyPort[] }[];
};
type Policy = { name: string; namespace: string; spec: PolicySpec };

/** One end of a connection: a pod (with its namespace's labels and its named ports) or an address. */
export type Endpoint =
  | {
      kind: "pod";
      name: string;
      namespace: string;
      namespaceLabels: Labels;
      labels: Labels;
      ip: string;
      ports?: Record<string, number>;
    }
  | { kind: "address"; name: string; ip: string };

export type Connection = { from: Endpoint; to: Endpoint; port: number; protocol?: "TCP" | "UDP" };

export function policiesOf(objects: K8sObject[]): Policy[] {
  return objects
    .filter((object) => object.kind === "NetworkPolicy")
    .map((object) => ({
      name: object.metadata.name,
      namespace: object.metadata.namespace ?? "default",
      spec: object.spec as PolicySpec,
    }));
}

export function matchesSelector(selector: LabelSelector | undefined, labels: Labels): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key];
    const values = expression.values ?? [];
    switch (expression.operator) {
      case "In":
        if (value === undefined || !values.includes(value)) return false;
        break;
      case "NotIn":
        if (value !== undefined && values.includes(value)) return false;
        break;
      case "Exists":
        if (value === undefined) return false;
        break;
      case "DoesNotExist":
        if (value !== undefined) return false;
        break;
      default:
        throw new Error(`unknown selector operator ${expression.operator}`);
    }
  }
  return true;
}

function policyTypes(spec: PolicySpec): string[] {
  if (spec.policyTypes && spec.policyTypes.length > 0) return spec.policyTypes;
  return spec.egress ? ["Ingress", "Egress"] : ["Ingress"];
}

function selects(policy: Policy, endpoint: Endpoint): boolean {
  return (
    endpoint.kind === "pod" &&
    endpoint.namespace === policy.namespace &&
    matchesSelector(policy.spec.podSelector, endpoint.labels)
  );
}

function peerMatches(peer: PolicyPeer, policy: Policy, endpoint: Endpoint): boolean {
  if (peer.ipBlock) {
    const { cidr, except = [] } = peer.ipBlock;
    return inCidr(endpoint.ip, cidr) && !except.some((range) => inCidr(endpoint.ip, range));
  }
  if (endpoint.kind !== "pod") return false;
  if (peer.namespaceSelector) {
    if (!matchesSelector(peer.namespaceSelector, endpoint.namespaceLabels)) return false;
  } else if (endpoint.namespace !== policy.namespace) {
    return false;
  }
  return matchesSelector(peer.podSelector, endpoint.labels);
}

function portMatches(ports: PolicyPort[] | undefined, connection: Connection): boolean {
  if (!ports || ports.length === 0) return true;
  const protocol = connection.protocol ?? "TCP";
  return ports.some((entry) => {
    if ((entry.protocol ?? "TCP") !== protocol) return false;
    if (entry.port === undefined) return true;
    const port =
      typeof entry.port === "number"
        ? entry.port
        : connection.to.kind === "pod"
          ? connection.to.ports?.[entry.port]
          : undefined;
    if (port === undefined) return false;
    return entry.endPort === undefined
      ? connection.port === port
      : connection.port >= port && connection.port <= entry.endPort;
  });
}

/** Whether the network plugin lets this connection through, with the reason when it does not. */
export function evaluate(policies: Policy[], connection: Connection): { allowed: boolean; reason: string } {
  const { from, to } = connection;
  const egress = policies.filter(
    (policy) => selects(policy, from) && policyTypes(policy.spec).includes("Egress"),
  );
  if (egress.length > 0) {
    const allowed = egress.some((policy) =>
      (policy.spec.egress ?? []).some(
        (rule) =>
          (rule.to === undefined ||
            rule.to.length === 0 ||
            rule.to.some((peer) => peerMatches(peer, policy, to))) &&
          portMatches(rule.ports, connection),
      ),
    );
    if (!allowed) return { allowed: false, reason: `no egress rule of ${names(egress)} allows it` };
  }
  const ingress = policies.filter(
    (policy) => selects(policy, to) && policyTypes(policy.spec).includes("Ingress"),
  );
  if (ingress.length > 0) {
    const allowed = ingress.some((policy) =>
      (policy.spec.ingress ?? []).some(
        (rule) =>
          (rule.from === undefined ||
            rule.from.length === 0 ||
            rule.from.some((peer) => peerMatches(peer, policy, from))) &&
          portMatches(rule.ports, connection),
      ),
    );
    if (!allowed) return { allowed: false, reason: `no ingress rule of ${names(ingress)} allows it` };
  }
  return { allowed: true, reason: "allowed" };
}

function names(policies: Policy[]): string {
  return policies.map((policy) => policy.name).join(", ");
}

/** Whether an address is inside a CIDR range; IPv4 and IPv6 never match each other. */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split("/");
  if (base === undefined) return false;
  const address = parseIp(ip);
  const network = parseIp(base);
  if (!address || !network || address.width !== network.width) return false;
  const bits = bitsText === undefined ? address.width : Number(bitsText);
  if (bits === 0) return true;
  const shift = BigInt(address.width - bits);
  return address.value >> shift === network.value >> shift;
}

function parseIp(text: string): { value: bigint; width: number } | null {
  if (text.includes(":")) {
    const [head = "", tail = ""] = text.split("::");
    const headGroups = head ? head.split(":") : [];
    const tailGroups = text.includes("::") ? (tail ? tail.split(":") : []) : [];
    const groups = text.includes("::")
      ? [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups]
      : text.split(":");
    if (groups.length !== 8) return null;
    let value = 0n;
    for (const group of groups) value = (value << 16n) + BigInt(Number.parseInt(group || "0", 16));
    return { value, width: 128 };
  }
  const octets = text.split(".").map(Number);
  if (octets.length !== 4 || octets.some((octet) => !Number.isInteger(octet) || octet < 0 || octet > 255)) {
    return null;
  }
  return { value: octets.reduce((sum, octet) => (sum << 8n) + BigInt(octet), 0n), width: 32 };
}
