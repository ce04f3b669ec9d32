import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

// The Hono subpath imports the core through the package itself, so both entry points share one core
// (one error class, one store) instead of each bundling a copy.
const coreBySelfReference: Plugin = {
  name: "core-by-self-reference",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/index\.js$/ }, () => ({
      path: "@agent-platform/messaging",
      external: true,
    }));
  },
};

export default defineConfig({
  entry: {
    index: "src/index.ts",
    hono: "src/hono/index.ts",
    inbound: "src/inbound/index.ts",
    // The bin's code, loaded by bin/platform-telegram-webhook.js; no export map entry.
    "telegram-webhook-cli": "src/cli/telegram-webhook-main.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "es2022",
  // The root entry and `inbound` share their common modules as chunks: one InvalidPayloadError class
  // for both, and the chunks `inbound` loads hold nothing of the root's Node-only code.
  splitting: true,
  treeshake: true,
  esbuildPlugins: [coreBySelfReference],
});
