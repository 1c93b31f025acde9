// Loaded into each platform process by the soak test (NODE_OPTIONS="--expose-gc --require …"):
// SIGUSR2 runs a full garbage collection, so that the heap `/metrics` reports next is what the
// process keeps alive rather than garbage not collected yet.
process.on("SIGUSR2", () => globalThis.gc?.());
