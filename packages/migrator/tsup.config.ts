import { defineConfig } from "tsup";

export default defineConfig([
  {
    entry: { index: "src/index.ts", lint: "src/lint/index.ts" },
    format: ["esm", "cjs"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "es2022",
    splitting: false,
  },
  {
    entry: { cli: "src/cli.ts" },
    format: ["esm"],
    sourcemap: true,
    target: "es2022",
  },
]);
