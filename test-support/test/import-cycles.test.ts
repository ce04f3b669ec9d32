import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, importGraph } from "../src/import-graph.js";

const root = join(import.meta.dirname, "..", "..");

/** Every workspace package and example that has a `src/`. */
const packages = ["packages", "examples"].flatMap((group) =>
  readdirSync(join(root, group))
    .map((name) => join(group, name))
    .filter((dir) => existsSync(join(root, dir, "src")) && existsSync(join(root, dir, "package.json"))),
);

describe("import circles", () => {
  it("finds the packages it checks", () => {
    expect(packages).toEqual(expect.arrayContaining(["packages/jwt-rbac", "packages/messaging"]));
  });

  it("the checker finds a circle, type-only and self imports included, and none in a tree", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts", "d.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(graph)).toEqual(
      expect.arrayContaining([
        ["a.ts", "b.ts", "c.ts", "a.ts"],
        ["e.ts", "e.ts"],
      ]),
    );
    expect(importCycles(graph)).toHaveLength(2);
    expect(
      importCycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it.each(packages)("%s/src has none (relative and #imports, `import type` included)", (dir) => {
    const graph = importGraph(join(root, dir));
    expect(graph.size).toBeGreaterThan(0);
    const circles = importCycles(graph).map((circle) => circle.join(" -> "));
    expect(circles, "move the shared part down into a module both import").toEqual([]);
  });
});
