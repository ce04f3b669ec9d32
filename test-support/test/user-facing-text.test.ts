import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** A tracker issue or a work session named by number: "issue 29", "issue #14", "stop 22", "(#12)". */
export const TRACKER_REFERENCE = /\b(?:issues?|stops?|tickets?|sessions?)\s+#?\d+\b|\(#\d+\)|\bissue\s*#\d+/i;

function walk(dir: string, keep: (file: string) => boolean): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => !file.split("/").includes("node_modules") && !file.split("/").includes("dist"))
    .filter(keep)
    .map((file) => join(dir, file));
}

/**
 * What a user reads: the READMEs, docs pages, BENCHMARKS.md and changesets, and the sources their doc comments and
 * error messages come from (tests and test fixtures excluded: a test's name may keep its reference).
 */
function userFacing(): string[] {
  const markdown = (file: string) =>
    file === "README.md" || file.endsWith("/README.md") || /^docs\//.test(file);
  const source = (file: string) =>
    /\.(ts|mts|mjs)$/.test(file) && !/\.test\.ts$/.test(file) && !file.endsWith(".d.ts");
  const files = ["README.md", "BENCHMARKS.md"].filter((file) => existsSync(join(root, file)));
  for (const group of ["packages", "examples"]) {
    for (const name of readdirSync(join(root, group))) {
      const dir = join(group, name);
      files.push(...walk(dir, (file) => markdown(file) && file.endsWith(".md")));
      files.push(...walk(join(dir, "src"), source));
    }
  }
  files.push(...walk("bench/src", source));
  // A changeset becomes the published changelog.
  files.push(...walk(".changeset", (file) => file.endsWith(".md") && file !== "README.md"));
  return files;
}

describe("user-facing text speaks of behaviour, not of tracker issues or work sessions", () => {
  const files = userFacing();

  it("finds the files it checks, and the pattern catches the forms seen", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "BENCHMARKS.md",
        "packages/jwt-rbac/README.md",
        "packages/jwt-rbac/src/index.ts",
      ]),
    );
    for (const text of ["as issue #14 asked", "the run before issue 29", "(issue 17, stop 22)", "see (#12)"])
      expect(text).toMatch(TRACKER_REFERENCE);
    for (const text of ["verification key #2 is refused", "RFC 7662 §2.1", "PKCS#1 v1.5", "stop the server"])
      expect(text).not.toMatch(TRACKER_REFERENCE);
  });

  it.each(files)("%s", (file) => {
    const lines = readFileSync(join(root, file), "utf8").split("\n");
    const found = lines.flatMap((line, index) =>
      TRACKER_REFERENCE.test(line) ? [`${index + 1}: ${line.trim()}`] : [],
    );
    expect(found, "say what the code does and why, without the tracker's numbers").toEqual([]);
  });
});
