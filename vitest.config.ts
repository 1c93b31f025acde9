import { defineConfig } from "vitest/config";

/**
 * One run for the whole repository: unit tests beside the code (`*.test.ts`) and the API's
 * integration tests (`tests/api/*.int.test.ts`), which start real services on real Postgres,
 * Redis and NATS. Workspace packages resolve to their built `dist/`, so `npm test` builds first.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "packages/*/src/**/*.test.ts",
            "services/*/src/**/*.test.ts",
            "tests/deploy/**/*.test.ts",
          ],
        },
      },
      {
        test: {
          name: "api",
          include: ["tests/api/**/*.int.test.ts"],
          // Benchmarks live beside unit code and run once, in the unit project.
          benchmark: { include: [] },
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
