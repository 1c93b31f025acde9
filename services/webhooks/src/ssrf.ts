import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** A target the delivery worker refuses to call (docs/webhooks.md), with the reason a client reads. */
export class TargetRefused extends Error {
  override name = "TargetRefused";
  readonly code = "EVALP_TARGET_REFUSED";
}

/** 2000::/3, the global unicast block of IPv6. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * Whether an address is one a webhook may reach: global unicast only (docs/webhooks.md). An
 * allow rule rather than a list of what to refuse, so a special-purpose range the list forgot is
 * refused too. The ranges are the IANA special-purpose registries as `ipaddr.js` keeps them:
 * - IPv4: anything `ipaddr.js` does not call plain `unicast` is refused: unspecified (0/8),
 *   private (10/8, 172.16/12, 192.168/16), carrier-grade NAT (100.64/10), loopback, link-local,
 *   IETF protocol assignments (192.0.0/24), documentation, the 6to4 relay anycast (192.88.99/24),
 *   benchmarking (198.18/15), AS112, AMT, multicast, reserved (240/4) and broadcast.
 * - IPv6: only inside 2000::/3 (global unicast), and there nothing `ipaddr.js` names: Teredo
 *   (2001::/32) and the rest of 2001::/23, documentation (2001:db8::/32, 3fff::/20), 6to4
 *   (2002::/16, refused rather than judged by the IPv4 inside: the relay is not ours to trust),
 *   benchmarking, ORCHID, AMT, AS112. NAT64 (64:ff9b::/96, 64:ff9b:1::/48), IPv4-translated
 *   (::ffff:0:0:0/96), site-local (fec0::/10), unique local, link-local, multicast, loopback and
 *   unspecified lie outside 2000::/3 and are refused by that alone.
 * - IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address inside it.
 */
export function isGlobalUnicast(address: string): boolean {
  // Node's parser first: only the usual forms (no `127.1` or `0x7f000001`, which ipaddr.js reads).
  const family = isIP(address);
  // A zone (`fe80::1%eth0`) names a link: never global.
  if (family === 0 || address.includes("%")) return false;
  // IPv6 in the URL standard's serialization first (hex groups only): ipaddr.js reads a dotted
  // tail as IPv4-mapped whatever precedes it (`::8.8.8.8` as `::ffff:8.8.8.8`), where the
  // address is `::808:808`.
  const text = family === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
  const parsed = ipaddr.parse(text);
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().range() === "unicast";
    return parsed.match(GLOBAL_UNICAST_V6) && parsed.range() === "unicast";
  }
  return parsed.range() === "unicast";
}

/** Whether an address is one no webhook may reach unless `WEBHOOK_ALLOW_PRIVATE=true`. */
export function isPrivateAddress(address: string): boolean {
  return !isGlobalUnicast(address);
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
