import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "@agent-platform/consumer-tests",
    include: ["test/**/*.test.ts"],
    // Packing, one npm install and two tsc runs happen once, before any test file.
    globalSetup: ["src/setup.ts"],
    // The files mostly wait for child processes (tsc, servers, runtimes), so they run side by side.
    maxWorkers: 3,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
