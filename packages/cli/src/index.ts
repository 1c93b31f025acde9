// The CLI as a library: the program and its runtime, for tests and for embedding it.
export { type ConfigFile, configPath, readConfig, writeConfig } from "./config-file.js";
export { connectClient } from "./connect.js";
export type { Runtime } from "./context.js";
export { CliError } from "./errors.js";
export { createProgram, run } from "./program.js";
