import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "@agent-platform/embedded-postgres",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["test/global-setup.ts"],
  },
});
