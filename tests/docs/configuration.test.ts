import { readFileSync } from "node:fs";
import { configSchema } from "@evalp/kit";
import { describe, expect, it } from "vitest";

// Configuration is documented once, in docs/configuration.md: every setting the processes parse
// (kit's zod schema) has a row there, and every row names a setting that exists.
const PAGE = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");

/**
 * Read by the OpenTelemetry exporter itself, not by the platform's schema: documented because an
 * operator sets them, and checked here against the exporter's own names.
 */
const READ_BY_THE_EXPORTER = [
  "OTEL_EXPORTER_OTLP_COMPRESSION",
  "OTEL_EXPORTER_OTLP_HEADERS",
  "OTEL_EXPORTER_OTLP_TIMEOUT",
];

/** The variables named in the first cell of the page's table rows (`| \`A\`, \`B\` | … |`). */
function documented(): string[] {
  const names: string[] = [];
  for (const [, cell] of PAGE.matchAll(/^\|\s*([^|]*?)\s*\|/gm)) {
    for (const [, name] of (cell ?? "").matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.push(name as string);
  }
  return names;
}

describe("docs/configuration.md", () => {
  const names = new Set(documented());
  const settings = Object.keys(configSchema.shape);

  it("documents every setting of the configuration schema", () => {
    expect(settings.length).toBeGreaterThan(40);
    expect(settings.filter((name) => !names.has(name))).toEqual([]);
  });

  it("documents no setting that does not exist", () => {
    const known = new Set([...settings, ...READ_BY_THE_EXPORTER]);
    expect([...names].filter((name) => !known.has(name))).toEqual([]);
  });
});
