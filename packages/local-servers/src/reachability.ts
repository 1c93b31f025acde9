import { connect } from "node:net";

/**
 * Whether something accepts TCP connections on `host`:`port` within `timeoutMs`. A refused
 * connection answers at once; the timeout bounds an address that drops packets.
 */
export async function answers(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
  });
}

/** Whether `hostname` (as `URL.hostname` gives it) is this machine's loopback: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(hostname: string): boolean {
  const host = unbracketed(hostname).toLowerCase();
  if (host === "localhost" || host === "::1") return true;
  const octets = host.split(".");
  return octets.length === 4 && octets[0] === "127" && octets.every((octet) => /^\d{1,3}$/.test(octet));
}

/** An IPv6 literal of a URL (`[::1]`) as an address (`::1`). */
export function unbracketed(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * The address a private server listens on for a loopback host: `localhost` is 127.0.0.1 (a
 * client that looks it up tries ::1 and then 127.0.0.1), the others as they are.
 */
export function bindAddress(hostname: string): string {
  const host = unbracketed(hostname);
  return host.toLowerCase() === "localhost" ? "127.0.0.1" : host;
}
