import { isBuiltin } from "node:module";
import { build, type Plugin } from "esbuild";
import { describe, expect, inject, it } from "vitest";
import { hasWebBuild, installedPackages, moduleSpecifiers, WEB_CONDITIONS } from "../src/exports.js";

const cases = installedPackages()
  .filter(hasWebBuild)
  .flatMap(moduleSpecifiers)
  .flatMap((specifier) => WEB_CONDITIONS.map((condition) => ({ specifier, condition })));

/** Bundles a specifier and lists every Node built-in import reached from it. */
async function bundle(
  specifier: string,
  format: "esm" | "cjs",
  conditions: string[],
  // Neutral adds no condition of its own: `browser` (which esbuild's browser platform adds) would
  // otherwise stand in for a missing `deno` or `bun` and hide it. The browser platform as wrangler
  // uses it is tested by the workerd bundle in runtimes.test.ts.
  platform: "neutral" | "node" = "neutral",
) {
  const nodeImports: string[] = [];
  const recordNodeImports: Plugin = {
    name: "record-node-imports",
    setup(build) {
      // Any built-in, `node:` or bare: the Node build's bundler writes `crypto` for `node:crypto`.
      build.onResolve({ filter: /.*/ }, ({ path, importer }) => {
        if (!isBuiltin(path)) return undefined;
        nodeImports.push(`${importer} imports ${path}`);
        return { path, external: true };
      });
    },
  };
  const result = await build({
    stdin: {
      contents:
        format === "esm" ? `export * from "${specifier}";` : `module.exports = require("${specifier}");`,
      resolveDir: inject("consumerDir"),
    },
    bundle: true,
    write: false,
    metafile: true,
    logLevel: "silent",
    format,
    platform,
    mainFields: ["module", "main"],
    conditions,
    plugins: [recordNodeImports],
  });
  return { nodeImports, inputs: Object.keys(result.metafile.inputs) };
}

describe("export conditions of the runtimes without Node built-ins", () => {
  it("has packages with a WebCrypto build to check", () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  it.each(cases)(
    "$specifier under `$condition` (and `node`) bundles without Node built-ins",
    async ({ specifier, condition }) => {
      for (const format of ["esm", "cjs"] as const) {
        // `node` set as well, as Bun, Deno and bundlers for Node set it: the runtime's condition must still win.
        const { nodeImports, inputs } = await bundle(specifier, format, [condition, "node"]);
        expect(nodeImports, format).toEqual([]);
        expect(
          inputs.filter((input) => input.includes("/dist/node/")),
          format,
        ).toEqual([]);
      }
    },
  );

  it("the check sees the built-in imports of the Node build", async () => {
    const [specifier] = cases.map((c) => c.specifier);
    const { nodeImports, inputs } = await bundle(specifier as string, "esm", [], "node");
    expect(nodeImports).not.toEqual([]);
    expect(inputs.some((input) => input.includes("/dist/node/"))).toBe(true);
  });
});
