import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The reviewed list of what each entry point of a package exports, read from its built dist: the names of the
 * `types` file of each subpath of the exports map ("type X" for a type-only export), checked against what every
 * build (each condition's ESM and CommonJS file) really exports at run time. The snapshot is
 * `<package>/test/exports.json`; after a reviewed change, regenerate every package's with
 * `pnpm build && UPDATE_EXPORTS=1 npx vitest run exports.test` at the repository root.
 *
 * Also held to the same list: every export has a doc comment (what an editor shows a user), and the package README's
 * `## API` section (or `docs/api.md`'s `# API`, where the README is a front page) names every export of every entry and
 * nothing else. Its format, so that the check is exact: per
 * entry point a heading one level below the section's that is its specifier in backticks (`@agent-platform/x`, `@agent-platform/x/hono`),
 * then a table whose rows' first cell is one export, `` `name` ``, or `` type `name` `` for a type-only one; the other
 * cells are free text.
 */
export function describeExportsSnapshot(packageDir: string): void {
  const snapshotFile = join(packageDir, "test", "exports.json");
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, unknown>;
  };
  const entries = Object.entries(manifest.exports).filter(([subpath]) => subpath !== "./package.json");

  describe(`${manifest.name}: the exports of each entry point`, () => {
    const exported = readExports(packageDir, entries);
    const declared = Object.fromEntries(
      Object.entries(exported).map(([subpath, list]) => [subpath, list.map((entry) => entry.listed)]),
    );

    it("match the reviewed snapshot (test/exports.json)", () => {
      if (process.env.UPDATE_EXPORTS === "1") {
        writeFileSync(snapshotFile, `${JSON.stringify(declared, null, 2)}\n`);
        // In the repository's own format, so the regenerated file passes `biome check` as written.
        const biome = createRequire(import.meta.url).resolve("@biomejs/biome/bin/biome");
        execFileSync(process.execPath, [biome, "format", "--write", snapshotFile], { stdio: "ignore" });
        console.warn(`UPDATE_EXPORTS=1: wrote ${snapshotFile}; review its diff`);
      }
      const reviewed = JSON.parse(readFileSync(snapshotFile, "utf8")) as Record<string, string[]>;
      expect(
        declared,
        "an export was added or removed: review it, then regenerate (see exports-snapshot.ts)",
      ).toEqual(reviewed);
    });

    it.each(entries.map(([subpath, target]) => [subpath, target] as const))(
      "%s: every build exports at run time the values its types declare",
      async (subpath, target) => {
        const values = (declared[subpath] ?? []).filter((name) => !name.startsWith("type ")).sort();
        const require = createRequire(join(packageDir, "package.json"));
        for (const file of files(target, "import")) {
          const module = (await import(pathToFileURL(join(packageDir, file)).href)) as object;
          expect(Object.keys(module).sort(), file).toEqual(values);
        }
        for (const file of files(target, "require")) {
          const module = require(join(packageDir, file)) as object;
          expect(
            Object.keys(module)
              .filter((key) => key !== "__esModule")
              .sort(),
            file,
          ).toEqual(values);
        }
      },
    );

    it.each(entries.map(([subpath]) => subpath))("%s: every export has a doc comment", (subpath) => {
      const undocumented = (exported[subpath] ?? [])
        .filter((entry) => !entry.documented)
        .map((entry) => entry.listed);
      expect(undocumented, "write a short what/why doc comment on each").toEqual([]);
    });

    it("the API section (README.md's `## API`, or docs/api.md) lists each entry point's exports, and only those", () => {
      const listed = apiSection(readFileSync(apiDocument(packageDir), "utf8"), manifest.name);
      const byEntry = Object.fromEntries(
        Object.entries(declared).map(([subpath, names]) => [subpath, [...names].sort()]),
      );
      expect(
        Object.fromEntries(Object.entries(listed).map(([subpath, names]) => [subpath, [...names].sort()])),
        `${apiDocument(packageDir)}: one \`### \`<specifier>\`\` per entry, one row per export (see exports-snapshot.ts)`,
      ).toEqual(byEntry);
    });
  });
}

/**
 * The exports each entry's heading in the README's `## API` section lists, keyed by subpath ("." for the package
 * itself): the first cell of each table row, "name" or "type name" as in the snapshot. A row whose first cell is not
 * one backticked identifier, a heading that is not an entry of `packageName` (or repeats one), or a row before the
 * first heading throws: the section's format is what makes the comparison exact. Prose between tables is free.
 */
function apiSection(readme: string, packageName: string): Record<string, string[]> {
  const lines = readme.split("\n");
  const start = lines.findIndex((line) => /^#{1,2} API$/.test(line.trim()));
  if (start === -1) throw new Error("no `## API` section (README.md) or `# API` (docs/api.md)");
  // The section ends at the next heading of its level or above; an entry's heading is one level below it.
  const level = (lines[start] as string).trim().indexOf(" ");
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}} `).test(line));
  const result: Record<string, string[]> = {};
  let current: string[] | undefined;
  for (const line of lines.slice(start + 1, end === -1 ? undefined : end)) {
    const heading = new RegExp(`^#{${level + 1}} \`([^\`]+)\`$`).exec(line.trim());
    if (heading) {
      const specifier = heading[1] as string;
      const subpath =
        specifier === packageName
          ? "."
          : specifier.startsWith(`${packageName}/`)
            ? `.${specifier.slice(packageName.length)}`
            : undefined;
      if (subpath === undefined || subpath in result) throw new Error(`## API: unexpected heading ${line}`);
      current = result[subpath] = [];
      continue;
    }
    if (!line.startsWith("|")) continue;
    if (current === undefined) throw new Error(`## API: a table row before any entry heading: ${line}`);
    const first = (line.split("|")[1] ?? "").trim();
    if (/^-+$/.test(first) || first === "Export") continue; // the separator and header rows
    const name = /^(type )?`([A-Za-z_$][\w$]*)`$/.exec(first);
    if (name === null)
      throw new Error(`## API: a row's first cell must be \`name\` or type \`name\`: ${line}`);
    current.push(`${name[1] ?? ""}${name[2]}`);
  }
  return result;
}

/**
 * Where a package lists its exports: `docs/api.md` (its `# API` section) when the package has one, a README kept
 * to a front page links to it; else the README's `## API` section.
 */
function apiDocument(packageDir: string): string {
  const docs = join(packageDir, "docs", "api.md");
  return existsSync(docs) ? docs : join(packageDir, "README.md");
}

/** Every file of one side (`import` or `require`) of an exports-map target, but its types. */
function files(target: unknown, side: "import" | "require"): string[] {
  const conditions = (target as Record<string, unknown>)[side];
  if (conditions === undefined) return [];
  const all = Object.entries(conditions as Record<string, string>)
    .filter(([condition]) => condition !== "types")
    .map(([, file]) => file);
  return [...new Set(all)];
}

function typesFile(target: unknown): string {
  const types = (target as Record<string, Record<string, string> | undefined>).import?.types;
  if (types === undefined) throw new Error(`no import.types in ${JSON.stringify(target)}`);
  return types;
}

/** One export of an entry: as the snapshot lists it ("type <name>" for a type-only one), and whether it has a doc comment. */
interface Export {
  listed: string;
  documented: boolean;
}

/** Per subpath, its exports sorted by name. */
function readExports(packageDir: string, entries: [string, unknown][]): Record<string, Export[]> {
  const roots = entries.map(([, target]) => join(packageDir, typesFile(target)));
  const program = ts.createProgram(roots, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  // The comment on the declaration a name resolves to (a re-export from a sibling package included), or on the
  // re-export itself: its text, or a JSDoc tag that carries text.
  const documented = (symbol: ts.Symbol): boolean =>
    ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim() !== "" ||
    symbol.getJsDocTags(checker).some((tag) => ts.displayPartsToString(tag.text).trim() !== "");
  const result: Record<string, Export[]> = {};
  entries.forEach(([subpath], index) => {
    const source = program.getSourceFile(roots[index] as string);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`cannot read ${roots[index]}`);
    result[subpath] = checker
      .getExportsOfModule(symbol)
      .map((exported) => {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        return {
          listed: target.flags & ts.SymbolFlags.Value ? exported.name : `type ${exported.name}`,
          documented: documented(target) || documented(exported),
        };
      })
      .sort((a, b) => a.listed.replace(/^type /, "").localeCompare(b.listed.replace(/^type /, "")));
  });
  return result;
}
