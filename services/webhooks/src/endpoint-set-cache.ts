import type { EndpointSet } from "./db/endpoint-sets.js";

/** The most environments whose sets a consumer keeps; past it, it forgets them all and reads again. */
const MAX_SETS = 10_000;

/** Endpoint sets kept in memory between batches, bounded. */
export function endpointSetCache(): {
  get(environmentId: string): EndpointSet | undefined;
  set(environmentId: string, set: EndpointSet): void;
  forget(environmentIds: Iterable<string>): void;
} {
  const sets = new Map<string, EndpointSet>();
  return {
    get: (environmentId) => sets.get(environmentId),
    set(environmentId, set) {
      if (sets.size >= MAX_SETS && !sets.has(environmentId)) sets.clear();
      sets.set(environmentId, set);
    },
    forget(environmentIds) {
      for (const environmentId of environmentIds) sets.delete(environmentId);
    },
  };
}
