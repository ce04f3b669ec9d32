import type { Options } from "tsup";

/** See tsup-self-reference.js. */
export declare function coreBySelfReference(
  packageName: string,
): NonNullable<Options["esbuildPlugins"]>[number];
