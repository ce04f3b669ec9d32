import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // Tests run on Node, so the core gets the Node platform, as the package's `node` export condition
    // gives it. The WebCrypto verifier is tested explicitly (test/verifiers.test.ts).
    alias: [
      {
        find: /^\.\/platform\.js$/,
        replacement: fileURLToPath(new URL("./src/node/platform.ts", import.meta.url)),
      },
    ],
  },
  test: {
    name: "@agent-platform/jwt-rbac",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
