import { defineConfig } from "vitest/config";

/**
 * One configuration for the whole repository: unit tests beside the code (`*.test.ts`), the
 * API's integration tests (`tests/api/*.int.test.ts`), which start real services on real
 * Postgres, Redis and NATS, and the reliability suite (`tests/reliability/*.rel.test.ts`: faults,
 * fuzzing, concurrency and a soak), run after the others and one file at a time. Workspace packages resolve to their built `dist/`, so `npm test` builds first.
 */
export default defineConfig({
  test: {
    // Once per run, whichever projects it runs: Postgres, Redis and NATS answer where the tests'
    // settings say (private servers under var/ where nothing does, stopped when the run ends).
    globalSetup: ["packages/testing/dist/global-setup.js"],
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "packages/*/src/**/*.test.ts",
            "services/*/src/**/*.test.ts",
            "tests/deploy/**/*.test.ts",
            "tests/docs/**/*.test.ts",
            "bench/**/*.test.mjs",
          ],
          // The workspace packages' built code runs as Node runs it, not through Vite's module
          // runner, whose export getters would be what a benchmark measures.
          server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } },
        },
      },
      {
        test: {
          name: "api",
          include: ["tests/api/**/*.int.test.ts"],
          // Fails a test during which a webhook body did not match the document's event catalog.
          setupFiles: ["tests/api/support/setup.ts"],
          // Benchmarks live beside unit code and run once, in the unit project.
          benchmark: { include: [] },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "reliability",
          include: ["tests/reliability/**/*.rel.test.ts"],
          benchmark: { include: [] },
          // Faults, load and the soak measure the platform itself: one file at a time, so that
          // no other test's load distorts what a file measures.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
