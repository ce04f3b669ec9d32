import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const src = fileURLToPath(new URL("../src/", import.meta.url));

/** The modules each source file imports, relative ones included. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(src, file), "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map(
    (match) => match[1] ?? "",
  );
}

describe("what the entries may import", () => {
  const files = readdirSync(src, { recursive: true, encoding: "utf8" }).filter((file) =>
    file.endsWith(".ts"),
  );

  it("finds the sources it checks", () => {
    expect(files).toEqual(
      expect.arrayContaining(["index.ts", "config-error.ts", "logger.ts", join("hono", "index.ts")]),
    );
  });

  it("the root entry imports only its own modules: no dependency, no Node built-in", () => {
    const rootFiles = files.filter((file) => !file.startsWith("hono"));
    for (const file of rootFiles) {
      for (const specifier of importsOf(file)) expect(specifier, file).toMatch(/^\.\//);
    }
  });

  it("the ./hono entry imports only its optional peers, never a Node built-in", () => {
    for (const specifier of importsOf(join("hono", "index.ts"))) {
      expect(["@hono/zod-openapi", "hono", "zod"]).toContain(specifier);
    }
  });
});
