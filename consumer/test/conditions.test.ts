import { isBuiltin } from "node:module";
import { build, type Plugin } from "esbuild";
import { describe, expect, inject, it } from "vitest";
import { installedPackages, WEB_CONDITIONS, webSpecifiers } from "../src/exports.js";

const webEntries = installedPackages().flatMap(webSpecifiers);
const cases = webEntries.flatMap(({ specifier }) =>
  WEB_CONDITIONS.map((condition) => ({ specifier, condition })),
);

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
  it("has the WebCrypto builds to check: jwt-rbac's subpaths and messaging's /inbound", () => {
    const specifiers = webEntries.map((entry) => entry.specifier);
    expect(specifiers).toContain("@agent-platform/jwt-rbac");
    expect(specifiers).toContain("@agent-platform/messaging/inbound");
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
    const specifier = webEntries.find((entry) => entry.hasNodeBuild)?.specifier;
    const { nodeImports, inputs } = await bundle(specifier as string, "esm", [], "node");
    expect(nodeImports).not.toEqual([]);
    expect(inputs.some((input) => input.includes("/dist/node/"))).toBe(true);
  });

  // The root entry stores in PostgreSQL and reads Node requests: what `/inbound` exists to leave out.
  it("the check sees the built-in imports of the messaging root entry under `workerd`", async () => {
    const { nodeImports } = await bundle("@agent-platform/messaging", "esm", ["workerd"]);
    expect(nodeImports).not.toEqual([]);
  });
});
