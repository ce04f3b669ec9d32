import { join } from "node:path";
import { inject } from "vitest";
import { type PackageJson, readPackageJson } from "./workspace.js";

export interface Installed {
  readonly name: string;
  readonly dir: string;
  readonly manifest: PackageJson;
}

/** The public packages as npm installed them from their tarballs in the consumer project. */
export function installedPackages(): Installed[] {
  return inject("packageNames").map((name) => {
    const dir = join(inject("consumerDir"), "node_modules", name);
    return { name, dir, manifest: readPackageJson(dir) };
  });
}

function exportsMap(manifest: PackageJson): Record<string, unknown> {
  const { exports } = manifest;
  if (typeof exports !== "object" || exports === null) throw new Error(`${manifest.name}: no exports map`);
  return exports as Record<string, unknown>;
}

function specifierOf(name: string, subpath: string): string {
  return subpath === "." ? name : `${name}/${subpath.slice(2)}`;
}

/** The module specifiers a user can import: one per subpath of the exports map (package.json aside). */
export function moduleSpecifiers({ name, manifest }: Installed): string[] {
  return Object.keys(exportsMap(manifest))
    .filter((subpath) => !subpath.endsWith(".json"))
    .map((subpath) => specifierOf(name, subpath));
}

/** Every file the manifest points at: exports targets under any condition, main/module/types, bins. */
export function namedFiles({ manifest }: Installed): string[] {
  const files = new Set<string>();
  const walk = (target: unknown): void => {
    if (typeof target === "string") files.add(target);
    else if (typeof target === "object" && target !== null) Object.values(target).forEach(walk);
  };
  walk(exportsMap(manifest));
  walk([manifest.main, manifest.module, manifest.types, manifest.bin]);
  return [...files].sort();
}

/**
 * The conditions that must select the WebCrypto build. Bun and Deno also match `node`, and so does a
 * bundler run for Node (wrangler with WRANGLER_BUILD_PLATFORM=node), so each of these has to come
 * before `node` in the exports map.
 */
export const WEB_CONDITIONS = ["workerd", "worker", "edge-light", "deno", "bun", "browser"] as const;

/**
 * The specifiers whose subpath routes those runtimes to a build of their own, and whether it also has a
 * Node build (a `node` condition). Subpaths without them (the Node-only ones) are not checked here.
 */
export function webSpecifiers({ name, manifest }: Installed): { specifier: string; hasNodeBuild: boolean }[] {
  return Object.entries(exportsMap(manifest))
    .filter(([, target]) => JSON.stringify(target).includes('"workerd":'))
    .map(([subpath, target]) => ({
      specifier: specifierOf(name, subpath),
      hasNodeBuild: JSON.stringify(target).includes('"node":'),
    }));
}
