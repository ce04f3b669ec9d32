import { resolve } from "node:path";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const entry = {
  index: "src/index.ts",
  hono: "src/hono/index.ts",
  express: "src/express/index.ts",
  fetch: "src/fetch/index.ts",
};

// The Node build swaps the one runtime-specific module (signature verification, JWKS files).
const nodeRuntime: Plugin = {
  name: "node-runtime",
  setup(build) {
    build.onResolve({ filter: /^\.\/runtime\.js$/ }, (args) =>
      args.importer.endsWith(resolve("src/index.ts")) ? { path: resolve("src/node/runtime.ts") } : undefined,
    );
  },
};

const common: Options = {
  entry,
  format: ["esm", "cjs"],
  sourcemap: true,
  target: "es2022",
  // Each build's entries share their modules as chunks: every subpath uses the one core of its build (one
  // `AuthError` class, one cache per instance), and the adapters reach internals (the path rule, the origin
  // helpers) without the root entry exporting them. A Node consumer gets the dist/node chunks everywhere.
  splitting: true,
  treeshake: true,
  clean: false,
};

export default defineConfig([
  { ...common, outDir: "dist", dts: true },
  {
    ...common,
    outDir: "dist/node",
    dts: false,
    platform: "node",
    esbuildPlugins: [nodeRuntime],
  },
]);
