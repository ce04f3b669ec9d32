import { defineConfig, type Options } from "tsup";

// The bench builds a copy without the instrumentation code path (statements labelled `instrumentation:`) to
// measure what that path costs; a published build never sets this (bench/src/base-build.ts).
const dropLabels: Options["esbuildOptions"] = (options) => {
  const labels = process.env.AGENT_PLATFORM_DROP_LABELS;
  if (labels) options.dropLabels = labels.split(",");
};

const entry = {
  index: "src/index.ts",
  hono: "src/hono/index.ts",
  express: "src/express/index.ts",
  fetch: "src/fetch/index.ts",
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
  esbuildOptions: dropLabels,
};

// The one runtime-specific module (signature verification, JWKS files) is `#runtime`, chosen by package.json's
// "imports" conditions as every tool resolves it: the `node` condition gives src/node/runtime.ts (tsc, editors and
// vitest run as Node, so they see that file, as the dist/node build does), anything else src/runtime.ts (WebCrypto).
export default defineConfig([
  {
    ...common,
    outDir: "dist",
    dts: true,
    // "neutral" turns off esbuild's `node` condition, so `#runtime` resolves to the WebCrypto file; the core
    // imports no Node built-in (test/runtime-neutral.test.ts), and every dependency stays external.
    platform: "neutral",
  },
  { ...common, outDir: "dist/node", dts: false, platform: "node" },
]);
