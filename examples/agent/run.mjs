#!/usr/bin/env node
// Usage: node examples/agent/run.mjs <server_url> <agent_token> <script.json>
// Runs the script (a JSON array of steps, see agent.mjs) and prints every answer frame.
import { readFileSync } from "node:fs";
import { runAgent } from "./agent.mjs";

const [url, token, file] = process.argv.slice(2);
if (!url || !token || !file) {
  console.error("usage: node examples/agent/run.mjs <server_url> <agent_token> <script.json>");
  process.exit(2);
}
const steps = JSON.parse(readFileSync(file, "utf8"));
const { answers, interview } = await runAgent({
  url,
  token,
  steps,
  onFrame: (frame) => console.log(JSON.stringify(frame)),
});
console.error(`${answers.length} commands answered; interview status ${interview?.status}`);
