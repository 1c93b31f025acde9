import type http2 from "node:http2";

/*
 * The web's `Headers` as the hop keeps them: short lists of lowercase names and their values.
 * The hop's calls hand Connect's interceptors and handlers a `Headers` (connect's types ask for
 * one), and Node's own (undici's) spends most of what the hop's headers cost: WebIDL conversions
 * of every name and value, a sorted copy at each iteration, a Map and its lists per object —
 * several objects per call at each end, and much of the hop's garbage. This one behaves as the
 * web's does for what callers do with it (names case-insensitive, values trimmed of HTTP
 * whitespace and checked, a repeated name's values joined by ", ", `set-cookie` kept apart,
 * iteration sorted by name) and hands its fields to Node's headers in one pass (`copyTo`).
 */

/** A header name: an HTTP token (RFC 9110 §5.6.2), as the web's Headers requires. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Leading and trailing HTTP whitespace, which the web's Headers strips from a value. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
/** What a value may not hold once trimmed. */
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;
const SET_COOKIE = "set-cookie";

/** What the web's Headers is made from, and how it iterates (Node's global types name them so). */
type HeadersInit = ConstructorParameters<typeof Headers>[0];
type Entries = ReturnType<Headers["entries"]>;
type Names = ReturnType<Headers["keys"]>;
type Values = ReturnType<Headers["values"]>;

function checkedName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

/** A value without the HTTP whitespace at its edges, as the web's Headers keeps it. */
function trimmed(text: string): string {
  // Most values have no whitespace at their edges: the regex runs only for those that do.
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  return first <= 32 || last <= 32 ? text.replace(EDGE_WHITESPACE, "") : text;
}

function checkedValue(value: string): string {
  const text = trimmed(String(value));
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError("Headers: invalid header value");
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 255) throw new TypeError("Headers: a header value must be a ByteString");
  }
  return text;
}

export class WireHeaders implements Headers {
  /*
   * Fields in two parallel lists, lowercase names, a repeated name's values joined; `set-cookie`
   * is in #cookies. A call's headers are a handful: a scan of a short list is cheaper than a
   * Map or a dictionary object, which V8 allocates a hash table for.
   */
  #names: string[] = [];
  #values: string[] = [];
  #cookies: string[] | undefined;

  constructor(init?: HeadersInit) {
    if (init === undefined || init === null) return;
    if (init instanceof WireHeaders) {
      this.#names = init.#names.slice();
      this.#values = init.#values.slice();
      if (init.#cookies) this.#cookies = init.#cookies.slice();
    } else if (Symbol.iterator in Object(init)) {
      for (const pair of init as Iterable<readonly string[]>) {
        if (pair.length !== 2) throw new TypeError("Headers: each pair must be a name and a value");
        this.append(pair[0] as string, pair[1] as string);
      }
    } else {
      const record = init as Record<string, string>;
      for (const name of Object.keys(record)) this.append(name, record[name] as string);
    }
  }

  /**
   * Headers a peer sent, as Node hands them over (names lowercase), pseudo-headers left out.
   * With `trailers`, the fields Connect sends as `trailer-<name>` in a unary answer go there
   * under `<name>` (connect's `trailerDemux`, in the same pass).
   */
  static fromNode(incoming: http2.IncomingHttpHeaders | undefined, trailers?: WireHeaders): WireHeaders {
    const header = new WireHeaders();
    if (!incoming) return header;
    for (const key in incoming) {
      if (key.charCodeAt(0) === 58 /* ":" */) continue;
      const value = incoming[key];
      if (value === undefined) continue;
      let target: WireHeaders = header;
      let name = key;
      if (trailers && key.startsWith("trailer-")) {
        target = trailers;
        name = key.slice("trailer-".length);
      }
      // Node's HTTP/2 parser refused bad names and values; the edges are trimmed as the web's are.
      if (Array.isArray(value)) for (const one of value) target.#add(name, trimmed(one));
      else target.#add(name, trimmed(String(value)));
    }
    return header;
  }

  /** Adds this object's fields to Node's outgoing `headers` (names prefixed by `prefix`, if any). */
  copyTo(headers: http2.OutgoingHttpHeaders, prefix = ""): http2.OutgoingHttpHeaders {
    const names = this.#names;
    const values = this.#values;
    for (let i = 0; i < names.length; i++) {
      const key = prefix + names[i];
      const held = headers[key];
      // A name already there (a `trailer-` field beside a trailer of the same name) gets both.
      headers[key] = held === undefined ? values[i] : `${held}, ${values[i]}`;
    }
    if (this.#cookies) headers[prefix + SET_COOKIE] = this.#cookies.slice();
    return headers;
  }

  /**
   * A value already checked, under a name already lowercase: added to the name's values (joined
   * by ", ", a cookie kept apart), or with `replace`, in their place.
   */
  #add(name: string, value: string, replace = false): void {
    if (name === SET_COOKIE) {
      if (this.#cookies && !replace) this.#cookies.push(value);
      else this.#cookies = [value];
      return;
    }
    const at = this.#names.indexOf(name);
    if (at < 0) {
      this.#names.push(name);
      this.#values.push(value);
    } else {
      this.#values[at] = replace ? value : `${this.#values[at]}, ${value}`;
    }
  }

  append(name: string, value: string): void {
    this.#add(checkedName(name), checkedValue(value));
  }

  set(name: string, value: string): void {
    this.#add(checkedName(name), checkedValue(value), true);
  }

  delete(name: string): void {
    const key = checkedName(name);
    if (key === SET_COOKIE) {
      this.#cookies = undefined;
      return;
    }
    const at = this.#names.indexOf(key);
    if (at >= 0) {
      this.#names.splice(at, 1);
      this.#values.splice(at, 1);
    }
  }

  get(name: string): string | null {
    const key = checkedName(name);
    if (key === SET_COOKIE) return this.#cookies ? this.#cookies.join(", ") : null;
    const at = this.#names.indexOf(key);
    return at < 0 ? null : (this.#values[at] as string);
  }

  has(name: string): boolean {
    const key = checkedName(name);
    return key === SET_COOKIE ? this.#cookies !== undefined : this.#names.includes(key);
  }

  getSetCookie(): string[] {
    return this.#cookies ? this.#cookies.slice() : [];
  }

  /** The fields as the web's Headers iterates them: sorted by name, each `set-cookie` apart. */
  #sorted(): Array<[string, string]> {
    const pairs: Array<[string, string]> = this.#names.map((name, i) => [name, this.#values[i] as string]);
    for (const cookie of this.#cookies ?? []) pairs.push([SET_COOKIE, cookie]);
    // Stable: a name's cookies stay in the order they came.
    return pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.#sorted()) callback.call(thisArg, value, name, this);
  }

  // Array iterators, which have the iterator helpers (`map`, `filter`, …) the web's have.
  entries(): Entries {
    return this.#sorted()[Symbol.iterator]() as unknown as Entries;
  }

  keys(): Names {
    return this.#sorted()
      .map(([name]) => name)
      [Symbol.iterator]() as unknown as Names;
  }

  values(): Values {
    return this.#sorted()
      .map(([, value]) => value)
      [Symbol.iterator]() as unknown as Values;
  }

  [Symbol.iterator](): Entries {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}
