import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/**
 * The import graph of one package's `src/`: for each source file (tests included), the source files it imports
 * through a relative specifier or a package `"imports"` entry (`#name`, every condition's target), `import type`,
 * `export … from` and `import("…")` included. Keys and values are paths relative to the package directory.
 */
export function importGraph(packageDir: string): Map<string, string[]> {
  const src = join(packageDir, "src");
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
    imports?: Record<string, unknown>;
  };
  const files = readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((file) => /\.(ts|tsx|mts|cts)$/.test(file) && !file.endsWith(".d.ts"))
    .map((file) => join(src, file));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = importedFiles.flatMap(({ fileName }) => {
      if (fileName.startsWith(".")) return [resolveSource(resolve(dirname(file), fileName))];
      if (fileName.startsWith("#")) {
        return leaves(manifest.imports?.[fileName]).map((target) => resolveSource(join(packageDir, target)));
      }
      return [];
    });
    graph.set(
      relative(packageDir, file),
      [...new Set(targets.filter((target) => target !== undefined))].map((target) =>
        relative(packageDir, target),
      ),
    );
  }
  return graph;
}

/** Every file an `"imports"` entry maps to, under any condition. */
function leaves(target: unknown): string[] {
  if (typeof target === "string") return [target];
  if (target === null || typeof target !== "object") return [];
  return Object.values(target).flatMap(leaves);
}

/** The source file a specifier names: `./x.js` is `x.ts`, a folder is its `index.ts`; a missing one is dropped. */
function resolveSource(path: string): string | undefined {
  const stem = path.replace(/\.(js|mjs|cjs|ts|mts|cts)$/, "");
  const candidates = [
    path,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.cts`,
    join(path, "index.ts"),
  ];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/**
 * The import circles of a graph, each as its files in import order with the first repeated at the end; one per
 * strongly connected component (a file that imports itself counts), so a knot of many files is reported once.
 */
export function importCycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components, iteratively, then one shortest circle through each knot.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: [string, number][] = [[root, 0]];
    while (work.length > 0) {
      const frame = work[work.length - 1] as [string, number];
      const [node, next] = frame;
      if (next === 0) {
        index.set(node, counter);
        low.set(node, counter);
        counter += 1;
        stack.push(node);
        onStack.add(node);
      }
      const edges = graph.get(node) ?? [];
      if (next < edges.length) {
        frame[1] = next + 1;
        const target = edges[next] as string;
        if (!index.has(target)) work.push([target, 0]);
        else if (onStack.has(target)) low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent[0], Math.min(low.get(parent[0]) ?? 0, low.get(node) ?? 0));
      if (low.get(node) === index.get(node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== node);
        if (component.length > 1 || (graph.get(node) ?? []).includes(node)) components.push(component);
      }
    }
  }
  return components.map((component) => shortestCircle(graph, new Set(component)));
}

/** A shortest circle inside one strongly connected component, by breadth-first search from its first file. */
function shortestCircle(graph: Map<string, string[]>, members: Set<string>): string[] {
  const start = [...members].sort()[0] as string;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    for (const target of graph.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(previous.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!previous.has(target) && target !== start) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
