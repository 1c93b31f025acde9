// The processes' service keys (packages/kit/src/auth/service-tokens.ts, docs/operations.md#service-keys),
// for a deployment: development and the tests generate their own at start.
//
//   node scripts/service-keys.mjs generate <dir> [process…]
//     writes a new Ed25519 private key, <dir>/<process>.pem (mode 600), for each process named
//     (default: gateway control platform interview webhooks); an existing file is never replaced.
//     A second key of one process, for a rotation: name it <process>.<anything>, e.g. gateway.2.
//   node scripts/service-keys.mjs public <dir>
//     prints SERVICE_PUBLIC_KEYS: the public key of every <process>.pem and <process>.<x>.pem
//     in <dir>, grouped by process (several while one is rotated).
import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseServicePublicKeys, SERVICE_NAMES } from "@evalp/kit";

const [command, dir, ...names] = process.argv.slice(2);
if (!dir || (command !== "generate" && command !== "public")) {
  console.error("usage: node scripts/service-keys.mjs generate <dir> [process…] | public <dir>");
  process.exit(2);
}
if (command === "generate") {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of names.length > 0 ? names : SERVICE_NAMES) {
    const file = join(dir, `${name}.pem`);
    if (existsSync(file)) {
      console.error(`${file} exists: kept`);
      continue;
    }
    const { privateKey } = generateKeyPairSync("ed25519", {
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    writeFileSync(file, privateKey, { mode: 0o600, flag: "wx" });
    console.error(`wrote ${file}`);
  }
} else {
  const keys = {};
  for (const file of readdirSync(dir)
    .filter((entry) => entry.endsWith(".pem"))
    .sort()) {
    const name = file.split(".")[0];
    const publicKey = createPublicKey(createPrivateKey(readFileSync(join(dir, file), "utf8")));
    keys[name] = [...(keys[name] ?? []), publicKey.export({ type: "spki", format: "pem" })];
  }
  const json = JSON.stringify(keys);
  // The same check every process makes at start.
  parseServicePublicKeys(json);
  console.log(json);
}
