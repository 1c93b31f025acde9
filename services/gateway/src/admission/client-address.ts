import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * What the per-address limits count a client under (docs/limits.md): an IPv4 address as it is;
 * an IPv6 address by its /64, since a host is handed a whole /64 and may send from any address in
 * it, so that counting each address would let one client rotate around every limit; an
 * IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, a dual-stack socket's view of an IPv4 client) as
 * the IPv4 address inside.
 */
export function addressKey(address: string): string {
  // A zone (`fe80::1%eth0`) names the link the address is on, not another client.
  const bare = address.split("%")[0] ?? address;
  if (isIP(bare) !== 6) return address;
  // The URL standard's serialization first (hex groups only): ipaddr.js reads any dotted tail as
  // IPv4-mapped (`::1.2.3.4` as `::ffff:1.2.3.4`).
  const parsed = ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}
