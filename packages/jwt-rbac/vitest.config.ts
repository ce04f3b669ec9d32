import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const nodeRuntime = fileURLToPath(new URL("./src/node/runtime.ts", import.meta.url));
const coreEntry = fileURLToPath(new URL("./src/index.ts", import.meta.url));

export default defineConfig({
  plugins: [
    {
      // Tests run on Node, so the public core gets the Node runtime, as the package's `node` export
      // condition gives it (tsup.config.ts does the same swap). Both runtimes are also tested directly.
      name: "node-runtime",
      enforce: "pre",
      resolveId(source, importer) {
        return source === "./runtime.js" && importer === coreEntry ? nodeRuntime : null;
      },
    },
  ],
  test: {
    name: "@agent-platform/jwt-rbac",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
