import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "@agent-platform/migrator",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ["test/global-setup.ts"],
    // Files share a worker's module cache, so PGlite's WebAssembly is compiled once per worker rather than
    // once per file. Every file still starts its own embedded database in its own data directory.
    isolate: false,
  },
});
