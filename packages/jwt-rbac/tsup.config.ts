import { resolve } from "node:path";
import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const entry = {
  index: "src/index.ts",
  hono: "src/hono/index.ts",
  express: "src/express/index.ts",
  fetch: "src/fetch/index.ts",
};

// Adapters import the core through the package itself, so every subpath shares one core (one
// `AuthError` class, one cache per instance) and a Node consumer gets the node:crypto core everywhere.
const coreBySelfReference: Plugin = {
  name: "core-by-self-reference",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/index\.js$/ }, () => ({
      path: "@agent-platform/jwt-rbac",
      external: true,
    }));
  },
};

// The Node build swaps the one runtime-specific module (signature verification, JWKS files).
const nodePlatform: Plugin = {
  name: "node-platform",
  setup(build) {
    build.onResolve({ filter: /^\.\/platform\.js$/ }, (args) =>
      args.importer.endsWith(resolve("src/index.ts")) ? { path: resolve("src/node/platform.ts") } : undefined,
    );
  },
};

const common: Options = {
  entry,
  format: ["esm", "cjs"],
  sourcemap: true,
  target: "es2022",
  splitting: false,
  treeshake: true,
  clean: false,
};

export default defineConfig([
  { ...common, outDir: "dist", dts: true, esbuildPlugins: [coreBySelfReference] },
  {
    ...common,
    outDir: "dist/node",
    dts: false,
    platform: "node",
    esbuildPlugins: [coreBySelfReference, nodePlatform],
  },
]);
