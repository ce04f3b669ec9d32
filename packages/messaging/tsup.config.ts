import { resolve } from "node:path";
import { defineConfig, type Options } from "tsup";

// The bench builds a copy without the instrumentation code path (statements labelled `instrumentation:`) to
// measure what that path costs; a published build never sets this (bench/src/base-build.ts).
const dropLabels: Options["esbuildOptions"] = (options) => {
  const labels = process.env.AGENT_PLATFORM_DROP_LABELS;
  if (labels) options.dropLabels = labels.split(",");
};

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

// The Node build swaps the one runtime-specific module: constant-time comparisons on node:crypto instead
// of WebCrypto (src/node/secure-compare.ts says why). Workers get the WebCrypto build of `inbound`.
const WEB_SECURE_COMPARE = resolve("src/secure-compare.ts");
const nodeCrypto: Plugin = {
  name: "node-crypto",
  setup(build) {
    build.onResolve({ filter: /secure-compare\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path.replace(/\.js$/, ".ts")) === WEB_SECURE_COMPARE
        ? { path: resolve("src/node/secure-compare.ts") }
        : undefined,
    );
  },
};

export default defineConfig([
  {
    entry: {
      index: "src/index.ts",
      hono: "src/hono/index.ts",
      inbound: "src/inbound/index.ts",
      // The bin's code, loaded by bin/platform-telegram-webhook.js; no export map entry.
      "telegram-webhook-cli": "src/cli/telegram-webhook-main.ts",
    },
    format: ["esm", "cjs"],
    dts: true,
    clean: false,
    sourcemap: true,
    target: "es2022",
    // The entries share their common modules as chunks: one core for the root and `./hono` (one error class,
    // one store), one InvalidPayloadError class for all, and the chunks `inbound` loads hold nothing of the
    // root's Node-only code.
    splitting: true,
    treeshake: true,
    esbuildPlugins: [nodeCrypto],
    esbuildOptions: dropLabels,
  },
  {
    // `inbound` for everything that is not Node (the exports map's worker, browser, deno and bun conditions).
    entry: { inbound: "src/inbound/index.ts" },
    outDir: "dist/web",
    format: ["esm", "cjs"],
    dts: false,
    clean: false,
    sourcemap: true,
    target: "es2022",
    treeshake: true,
  },
]);
