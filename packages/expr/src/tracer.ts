import type { JsonValue } from "./json.js";
import type { OmittedValue, TraceError, TraceStep } from "./trace.js";

/**
 * What a node's trace steps share, fixed when it is compiled: its pointer, op and fn, and the bytes
 * its step takes in the serialized trace besides its value (the step's JSON with the comma after it).
 */
export type StepSite = { path: string; op: string; fn: string | undefined; bytes: number };

export function stepSite(path: string, op: string, fn: string | undefined): StepSite {
  // `{"path":"…","op":"…","fn":"…","value":` and `},` around the value. Counted, not serialized: a
  // compiled node's path holds only `/args/<index>` tokens and its op and fn are catalog names, all
  // ASCII that JSON does not escape.
  const bytes = 29 + path.length + op.length + (fn === undefined ? 0 : 8 + fn.length);
  return { path, op, fn, bytes };
}

/** `,"error":"…"` */
const ERROR_BYTES: Record<TraceError, number> = {
  type_error: ',"error":"type_error"'.length,
  limit_exceeded: ',"error":"limit_exceeded"'.length,
};

/**
 * Records the steps of one evaluation (all axes of a scorecard share one) within a byte budget of
 * serialized JSON, so that a trace's size, and the memory its serialization takes, cannot grow with
 * the number of nodes times the size of the values they read. A value over `valueMax` is replaced by
 * a `value_omitted` marker; once a step would pass the budget, it and every later step are left out
 * and counted in `omitted`. Each value's size is measured once per evaluation (by identity), and no
 * further than `valueMax`, so a large value read by many nodes costs little more than a small one.
 */
export class Tracer {
  /** Steps left out because the budget ran out. */
  omitted = 0;
  private left: number;
  private full = false;
  private readonly valueMax: number;
  /** Measured sizes (capped at `valueMax + 1`) of the objects and longer strings met so far. */
  private readonly sizes = new Map<object | string, number>();
  /** Property counts of the objects omitted so far, for their markers. */
  private readonly keyCounts = new Map<object, number>();

  constructor(budget: number, valueMax: number) {
    this.left = budget;
    this.valueMax = valueMax;
  }

  /** True when the trace has been cut: no step is recorded any more. */
  get truncated(): boolean {
    return this.full;
  }

  /** Appends the step of `site` with `value` to `steps`, or counts it as omitted. */
  record(steps: TraceStep[], site: StepSite, value: JsonValue, error: TraceError | undefined): void {
    if (this.full) {
      this.omitted += 1;
      return;
    }
    const step: TraceStep =
      site.fn === undefined
        ? { path: site.path, op: site.op, value }
        : { path: site.path, op: site.op, fn: site.fn, value };
    let bytes = site.bytes;
    const size = this.sizeOf(value);
    if (size > this.valueMax) {
      const marker = this.markerOf(value as string | object);
      step.value = null;
      step.value_omitted = marker;
      // `null,"value_omitted":{"type":"…","size":n}`
      bytes += 40 + marker.type.length + String(marker.size).length;
    } else {
      bytes += size;
    }
    if (error !== undefined) {
      step.error = error;
      bytes += ERROR_BYTES[error];
    }
    if (bytes > this.left) {
      this.full = true;
      this.omitted += 1;
      return;
    }
    this.left -= bytes;
    steps.push(step);
  }

  /** The UTF-8 JSON size of `value`, exact up to `valueMax`, some larger number beyond it. */
  private sizeOf(value: JsonValue): number {
    if (value === null) return 4;
    if (typeof value === "boolean") return value ? 4 : 5;
    if (typeof value === "number") return String(value).length;
    if (typeof value === "string") {
      // Every UTF-16 unit takes at least one byte, so a longer string is over without being read.
      if (value.length + 2 > this.valueMax) return value.length + 2;
      if (value.length <= 32) return jsonStringBytes(value);
    }
    const known = this.sizes.get(value);
    if (known !== undefined) return known;
    const size = boundedJsonBytes(value, this.valueMax);
    this.sizes.set(value, size);
    return size;
  }

  private markerOf(value: string | object): OmittedValue {
    if (typeof value === "string") return { type: "string", size: value.length };
    if (Array.isArray(value)) return { type: "array", size: value.length };
    let keys = this.keyCounts.get(value);
    if (keys === undefined) {
      keys = Object.keys(value).length;
      this.keyCounts.set(value, keys);
    }
    return { type: "object", size: keys };
  }
}

/** UTF-8 bytes of a string: surrogate halves take 2 each (4 a pair), other units above 0x7ff take 3. */
export function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x80) bytes += unit < 0x800 || (unit >= 0xd800 && unit < 0xe000) ? 1 : 2;
  }
  return bytes;
}

function jsonStringBytes(text: string): number {
  return utf8Bytes(JSON.stringify(text));
}

/**
 * The UTF-8 JSON size of `value`, walking no further than `max` bytes: exact when it is at most
 * `max`, else some number above it. Iterative: a value may nest as deep as its source allowed.
 */
export function boundedJsonBytes(value: JsonValue, max: number): number {
  let total = 0;
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const v = stack.pop() as JsonValue;
    if (v === null) total += 4;
    else if (typeof v === "boolean") total += v ? 4 : 5;
    else if (typeof v === "number") total += String(v).length;
    else if (typeof v === "string") total += v.length + 2 > max - total ? v.length + 2 : jsonStringBytes(v);
    else if (Array.isArray(v)) {
      // Brackets and the commas between items.
      total += 2 + Math.max(0, v.length - 1);
      if (total > max) return total;
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i] as JsonValue);
    } else {
      total += 2;
      let first = true;
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        // `"key":` and a comma before every property but the first.
        total += (first ? 1 : 2) + (key.length + 2 > max - total ? key.length + 2 : jsonStringBytes(key));
        first = false;
        if (total > max) return total;
        stack.push(v[key] as JsonValue);
      }
    }
    if (total > max) return total;
  }
  return total;
}
