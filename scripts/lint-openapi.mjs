// Lints the API document as clients get it with Redocly (`recommended`) and Spectral
// (`spectral:oas`); any error or warning fails.
//
//   node scripts/lint-openapi.mjs            the document of the built gateway (no server, no
//                                            connection is needed to describe it), written to
//                                            var/openapi.json
//   node scripts/lint-openapi.mjs FILE       a document already fetched (e.g. a served /openapi.json)
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

async function writeBuiltDocument() {
  const { describeApi } = await import("@evalp/gateway");
  const file = join(root, "var", "openapi.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(await describeApi(), null, 2)}\n`);
  return file;
}

const file = process.argv[2] ? resolve(process.argv[2]) : await writeBuiltDocument();
const run = (command, args) => spawnSync(command, args, { cwd: root, encoding: "utf8" });
const bin = (name) => join(root, "node_modules", ".bin", name);

const redocly = run(bin("redocly"), ["lint", file, "--config", "redocly.yaml", "--format", "json"]);
const redoclyProblems = JSON.parse(redocly.stdout || "{}").problems ?? [];
for (const problem of redoclyProblems) {
  console.error(
    `redocly ${problem.severity} ${problem.ruleId}: ${problem.message} (${problem.location?.[0]?.pointer})`,
  );
}
const spectral = run(bin("spectral"), [
  "lint",
  file,
  "--ruleset",
  ".spectral.yaml",
  "--fail-severity",
  "warn",
]);
if (spectral.status !== 0) console.error(spectral.stdout, spectral.stderr);

if (redocly.status === null || redoclyProblems.length > 0 || spectral.status !== 0) {
  console.error(
    `openapi: ${redoclyProblems.length} Redocly problems; Spectral ${spectral.status === 0 ? "clean" : "failed"}`,
  );
  process.exit(1);
}
console.log("openapi: Redocly (recommended) and Spectral (spectral:oas): no errors, no warnings");
