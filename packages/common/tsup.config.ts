import { defineConfig } from "tsup";

// Peer dependencies (hono, zod) stay external, as tsup does by default for them, so the root entry
// bundles nothing and the `./hono` entry uses the app's own copies.
export default defineConfig({
  entry: { index: "src/index.ts", hono: "src/hono/index.ts", internal: "src/internal.ts" },
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "es2022",
  // The root and `./internal` entries share their modules as chunks: one ConfigError class for both.
  splitting: true,
  treeshake: true,
});
