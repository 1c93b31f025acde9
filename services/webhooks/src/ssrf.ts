import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** A target the delivery worker refuses to call (docs/webhooks.md), with the reason a client reads. */
export class TargetRefused extends Error {
  override name = "TargetRefused";
  readonly code = "EVALP_TARGET_REFUSED";
}

/** Addresses no webhook may reach unless `WEBHOOK_ALLOW_PRIVATE=true`: private, loopback, link-local and the like. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, "ipv6");
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`). */
function mappedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex?.[1] || !hex[2]) return null;
  const high = Number.parseInt(hex[1], 16);
  const low = Number.parseInt(hex[2], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** Whether an IP address is private, loopback, link-local, reserved or multicast. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, "ipv4");
  if (family === 6) {
    const inner = mappedIpv4(address);
    if (inner) return BLOCKED.check(inner, "ipv4");
    return BLOCKED.check(address, "ipv6");
  }
  return true;
}

/** Why a URL cannot be a webhook target by its form alone, or null when it can. */
export function urlProblem(value: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "url is not a valid absolute URL";
  }
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol))
    return allowPrivate ? "url must use http or https" : "url must use https";
  if (url.username || url.password) return "url must not contain credentials";
  if (!url.hostname) return "url has no host";
  return null;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** Every address a host name resolves to (system resolver, as connections use it). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

/**
 * Checks a target before an attempt (and at creation): its form, then, unless private targets
 * are allowed, that no address its host resolves to is private, and that it is on port 443.
 * Throws TargetRefused.
 */
export async function checkTarget(value: string, allowPrivate: boolean, resolve: Resolver = systemResolver) {
  const problem = urlProblem(value, allowPrivate);
  if (problem) throw new TargetRefused(problem);
  if (allowPrivate) return;
  const host = new URL(value).hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host);
  if (addresses.length === 0 || addresses.some(({ address }) => isPrivateAddress(address))) {
    throw new TargetRefused("private address not allowed");
  }
  // Deliveries leave the cluster on 443 only (deploy/k8s egress policy): another port would time
  // out attempt after attempt until the endpoint is disabled, five days later.
  if (new URL(value).port !== "") throw new TargetRefused("url must use https's port 443");
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for outgoing connections that refuses private addresses at connect time, so a
 * name that resolves differently between the check and the connection (DNS rebinding) still
 * cannot reach a private address.
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.length === 0 || addresses.some(({ address }) => isPrivateAddress(address));
    if (refused) return callback(new TargetRefused("private address not allowed"), []);
    const first = addresses[0] as LookupAddress;
    if (options.all) return callback(null, addresses);
    return callback(null, first.address, first.family);
  });
}
