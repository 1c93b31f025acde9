/**
 * JSON pointers (RFC 6901) name where a problem is (`/axes/0/expr/args/1`) and which node a trace step
 * belongs to; the API returns them verbatim, so they must be exact.
 */

/** Escapes one reference token (`~` → `~0`, `/` → `~1`) so any key can be a pointer segment. */
export function escapePointerToken(token: string): string {
  // Most tokens ("args", indices) need no escaping; validation builds one pointer per node.
  if (!token.includes("~") && !token.includes("/")) return token;
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** The pointer of a child of `pointer`: `appendPointer("/axes", 0)` is `/axes/0`. */
export function appendPointer(pointer: string, ...tokens: Array<string | number>): string {
  let out = pointer;
  for (const token of tokens) out += `/${escapePointerToken(String(token))}`;
  return out;
}

/**
 * The value a pointer names inside `root`, or `undefined` when it names nothing. Lets a caller show the
 * node a problem or a trace step is about.
 */
export function resolvePointer(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined;
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token)) return undefined;
      current = current[Number(token)];
    } else if (typeof current === "object" && current !== null && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else {
      return undefined;
    }
  }
  return current;
}
