// Plain JavaScript: tsup loads its config with Node, which imports this file as is.

/**
 * An esbuild plugin for tsup: a subpath entry's `../index.js` import becomes an import of the package itself,
 * left external, so every entry point shares the one core of the root entry (one error class, one cache)
 * instead of bundling a copy, and a Node consumer gets the Node build of that core through the exports map.
 * @param {string} packageName the package's own name, e.g. "@agent-platform/jwt-rbac"
 * @returns {NonNullable<import("tsup").Options["esbuildPlugins"]>[number]}
 */
export function coreBySelfReference(packageName) {
  return {
    name: "core-by-self-reference",
    setup(build) {
      build.onResolve({ filter: /^\.\.\/index\.js$/ }, () => ({ path: packageName, external: true }));
    },
  };
}
