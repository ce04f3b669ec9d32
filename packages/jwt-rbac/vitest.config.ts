import { defineConfig } from "vitest/config";

// No resolver plugin: tests run on Node, so `#runtime` resolves through package.json's "imports" `node` condition
// to src/node/runtime.ts, as the package's `node` export gives its dist/node build. Both runtimes are also tested
// directly (test/verifiers.test.ts, test/hostile-requests.web.test.ts).
export default defineConfig({
  test: {
    name: "@agent-platform/jwt-rbac",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
