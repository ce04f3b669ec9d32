import { defineConfig } from "vitest/config";

// One `vitest run` at the root runs every workspace's tests; each project keeps its own config.
export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*", "test-support"],
    // Most files wait on servers, processes and PostgreSQL rather than compute: two at once on the 2-core
    // machine (vitest's default there is one) roughly halves the suite's wall time.
    maxWorkers: 2,
  },
});
