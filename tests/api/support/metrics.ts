import { expect } from "vitest";

/** One sample of a Prometheus text exposition: its name (with any `_bucket`/`_count` suffix), labels, value. */
export type MetricSample = { name: string; labels: Record<string, string>; value: number };

/** What a scrape found: its samples and each metric family's declared type. */
export type Scrape = { samples: MetricSample[]; types: Map<string, string> };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (version 0.0.4), failing on any line it cannot read. */
export function parseExposition(text: string): Scrape {
  const samples: MetricSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type?.[1] && type[2]) types.set(type[1], type[2]);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match?.[1] || match[3] === undefined) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? "").matchAll(LABEL)) {
      if (key !== undefined && value !== undefined) labels[key] = value.replace(/\\(.)/g, "$1");
    }
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return { samples, types };
}

/** GETs `<opsUrl>/metrics` and parses it. */
export async function scrape(opsUrl: string): Promise<Scrape> {
  const response = await fetch(`${opsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseExposition(await response.text());
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf(found: Scrape, name: string, labels: Record<string, string> = {}): MetricSample[] {
  return found.samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The sum of the samples of `name` whose labels include `labels`; fails when there is none. */
export function metricValue(found: Scrape, name: string, labels: Record<string, string> = {}): number {
  const matching = samplesOf(found, name, labels);
  expect(matching.length, `${name}${JSON.stringify(labels)} is exposed`).toBeGreaterThan(0);
  return matching.reduce((sum, sample) => sum + sample.value, 0);
}
