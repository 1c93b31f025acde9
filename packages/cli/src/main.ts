#!/usr/bin/env node
import { stdin } from "node:process";
import { connectClient } from "./connect.js";
import { run } from "./program.js";
import { promptPassword, readAllStdin } from "./terminal.js";

// The `evalp` executable: the real process's environment, streams and terminal around `run`.
process.exitCode = await run(process.argv.slice(2), {
  env: process.env,
  streams: {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  },
  readStdin: readAllStdin,
  promptPassword: stdin.isTTY ? promptPassword : undefined,
  connect: (url, credential) => connectClient(url, credential),
});
