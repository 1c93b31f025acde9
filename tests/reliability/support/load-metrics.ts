import { readFile } from "node:fs/promises";

/** The values of the named metrics in a Prometheus text page (the first series of each). */
export async function scrapeMetrics(url: string, names: string[]): Promise<Record<string, number>> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  const text = await response.text();
  const values: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    const [, name, value] = match ?? [];
    if (name && value && names.includes(name) && !(name in values)) values[name] = Number(value);
  }
  return values;
}

/** A process's resident set size, as the kernel counts it (VmRSS), in bytes. */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * How fast y grows per unit of x, as the median of the slopes between every two points
 * (Theil-Sen): one outlier (a collection that ran late, a burst of requests in flight at one
 * sample) moves it little, where it would tilt a least-squares line over a handful of points.
 */
export function trend(points: Array<{ x: number; y: number }>): number {
  const slopes: number[] = [];
  for (const [i, a] of points.entries()) {
    for (const b of points.slice(i + 1)) if (b.x !== a.x) slopes.push((b.y - a.y) / (b.x - a.x));
  }
  return slopes.length === 0 ? 0 : median(slopes);
}
