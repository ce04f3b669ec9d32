import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The core must run on Bun, Deno, Workers and browsers: no Node built-ins outside `src/node/`,
// and `process` only inside the one guarded env-reading helper.
const srcDir = join(import.meta.dirname, "..", "src");
const ENV_HELPER = "env.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("runtime-neutral core", () => {
  const files = sourceFiles(srcDir);

  it("has source files to check", () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files.map((file) => [relative(srcDir, file), file]))("%s imports no Node built-in", (_, file) => {
    const text = readFileSync(file, "utf8");
    expect(text).not.toMatch(/from\s+["']node:/);
    expect(text).not.toMatch(/require\(\s*["']node:/);
    expect(text).not.toMatch(/import\(\s*["']node:/);
  });

  it.each(files.filter((file) => !file.endsWith(ENV_HELPER)).map((file) => [relative(srcDir, file), file]))(
    "%s does not touch process",
    (_, file) => {
      expect(readFileSync(file, "utf8")).not.toMatch(/\bprocess\./);
    },
  );
});

describe("#runtime: every tool resolves the runtime file its build uses", () => {
  const packageDir = join(import.meta.dirname, "..");
  const chunks = (dir: string): string =>
    readdirSync(join(packageDir, dir))
      .filter((file) => /\.(c?js)$/.test(file))
      .map((file) => readFileSync(join(packageDir, dir, file), "utf8"))
      .join("\n");

  it("tsc and editors (Node resolution, `node` condition) see src/node/runtime.ts", () => {
    const { resolvedModule } = ts.resolveModuleName(
      "#runtime",
      join(srcDir, "index.ts"),
      {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
      },
      ts.sys,
    );
    expect(resolvedModule?.resolvedFileName).toBe(join(srcDir, "node", "runtime.ts"));
  });

  it("vitest (on Node) runs the Node runtime", async () => {
    const { runtime } = await import("#runtime");
    expect(runtime.verifier.name).toBe("node:crypto");
  });

  it("the built dist is WebCrypto only, dist/node node:crypto only (ESM and CommonJS)", () => {
    const web = chunks("dist");
    const node = chunks("dist/node");
    expect(web).toContain('"webcrypto"');
    expect(web).not.toMatch(/["']node:/);
    expect(node).toContain('"node:crypto"');
    expect(node).not.toContain('"webcrypto"');
  });
});
