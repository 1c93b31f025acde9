import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";

/** Resolves a host name to every address it has (as `dns.lookup` with `all: true` does). */
export type Lookup = (hostname: string) => Promise<string[]>;

const systemLookup: Lookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((entry) => entry.address);

/** One replica of a service and what its caller knows of its health. */
export type Endpoint<T> = {
  /** Its base URL (`http://10.0.0.7:8081`). */
  url: string;
  /** What calls it (a Connect transport with its own HTTP/2 session). */
  client: T;
  /** Failed in transport this many times in a row. */
  failures: number;
  /** Not chosen before this time (ms since the epoch) while others are healthy. */
  downUntil: number;
};

/**
 * The replicas of one service, as its address names them: several base URLs separated by
 * commas (`http://10.0.0.7:8081,http://10.0.0.8:8081`), or one URL whose host name resolves to
 * several addresses (a Kubernetes headless Service), resolved again every `refreshMs` as pods
 * come and go. A URL whose host is an address is used as it is.
 */
export type EndpointSet<T> = {
  /**
   * Resolves the host name again when it is time to: a promise to wait for only while no
   * replica is known yet (the first lookup); later lookups run beside the calls.
   */
  refresh(): Promise<void> | undefined;
  /**
   * The next replica to call, round robin over the healthy ones, never one in `tried`; when every
   * untried replica is marked down, the one whose mark ends first (a marked replica may be back).
   * Undefined once every replica was tried.
   */
  pick(tried: readonly Endpoint<T>[]): Endpoint<T> | undefined;
  /** The replica failed in transport: others are preferred for a while that grows with each failure. */
  markDown(endpoint: Endpoint<T>): void;
  /** The replica answered. */
  markUp(endpoint: Endpoint<T>): void;
  /** The replicas known now. */
  endpoints(): readonly Endpoint<T>[];
};

/** The first mark lasts this long; each further failure doubles it, up to MAX_DOWN_MS. */
const FIRST_DOWN_MS = 250;
const MAX_DOWN_MS = 5_000;

/** The base URLs a service address names, without a trailing slash. */
export function parseServiceAddress(address: string): URL[] {
  const urls = address
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => new URL(part));
  if (urls.length === 0) throw new Error(`no service URL in "${address}"`);
  return urls;
}

const baseOf = (url: URL) => url.toString().replace(/\/$/, "");

export function createEndpointSet<T>(
  address: string,
  options: {
    /** Builds the client of one replica; called once per URL. */
    create: (url: string) => T;
    /** Called with a replica's client once it is no longer among the service's replicas. */
    retire?: (client: T) => void;
    /** How often a host name is resolved again. */
    refreshMs: number;
    lookup?: Lookup;
    now?: () => number;
  },
): EndpointSet<T> {
  const lookup = options.lookup ?? systemLookup;
  const now = options.now ?? Date.now;
  const configured = parseServiceAddress(address);
  // One URL with a host name: its addresses are the replicas.
  const named =
    configured.length === 1 && configured[0] && isIP(configured[0].hostname) === 0 ? configured[0] : null;
  let current: Endpoint<T>[] = [];
  let next = 0;
  let resolvedAt = Number.NEGATIVE_INFINITY;
  let resolving: Promise<void> | null = null;

  const endpointOf = (url: string, previous: Map<string, Endpoint<T>>): Endpoint<T> =>
    previous.get(url) ?? { url, client: options.create(url), failures: 0, downUntil: 0 };

  const use = (urls: string[]) => {
    const previous = new Map(current.map((endpoint) => [endpoint.url, endpoint]));
    current = [...new Set(urls)].map((url) => endpointOf(url, previous));
    const kept = new Set(current.map((endpoint) => endpoint.url));
    for (const [url, endpoint] of previous) if (!kept.has(url)) options.retire?.(endpoint.client);
  };

  if (!named) use(configured.map(baseOf));

  const resolve = async () => {
    if (!named) return;
    try {
      const addresses = await lookup(named.hostname);
      if (addresses.length > 0) {
        use(
          addresses.map((address) => {
            const url = new URL(named);
            url.hostname = isIP(address) === 6 ? `[${address}]` : address;
            return baseOf(url);
          }),
        );
      }
    } catch {
      // The name does not resolve just now: keep calling the replicas known (none at first:
      // the call fails in transport and is answered 503 like any unreachable service).
    } finally {
      resolvedAt = now();
    }
  };

  const lookUp = () => {
    resolving ??= resolve().finally(() => {
      resolving = null;
    });
    return resolving;
  };

  return {
    refresh() {
      if (!named || now() - resolvedAt < options.refreshMs) return undefined;
      const done = lookUp();
      // Known replicas keep serving while the name is looked up again in the background.
      return current.length === 0 ? done : undefined;
    },
    pick(tried) {
      const at = now();
      let fallback: Endpoint<T> | undefined;
      for (let i = 0; i < current.length; i++) {
        const endpoint = current[(next + i) % current.length] as Endpoint<T>;
        if (tried.includes(endpoint)) continue;
        if (endpoint.downUntil <= at) {
          next = (next + i + 1) % current.length;
          return endpoint;
        }
        if (!fallback || endpoint.downUntil < fallback.downUntil) fallback = endpoint;
      }
      return fallback;
    },
    markDown(endpoint) {
      endpoint.failures += 1;
      endpoint.downUntil = now() + Math.min(FIRST_DOWN_MS * 2 ** (endpoint.failures - 1), MAX_DOWN_MS);
    },
    markUp(endpoint) {
      endpoint.failures = 0;
      endpoint.downUntil = 0;
    },
    endpoints: () => current,
  };
}
