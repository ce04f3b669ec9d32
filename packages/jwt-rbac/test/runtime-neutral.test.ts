import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
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
