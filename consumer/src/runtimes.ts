import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/**
 * The binary a runtime's platform package ships (installed as an optional dependency of this
 * workspace, so no install script has to download it). Undefined where the package is not
 * installed (another OS or CPU): those tests are skipped with a line saying so, unless
 * REQUIRE_RUNTIMES is set, as CI sets it, where a missing runtime is a failure.
 */
export function runtimeBinary(runtime: string, pkg: string, path: string): string | undefined {
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), path);
  } catch {
    const why = `${runtime}: ${pkg} is not installed on ${process.platform}-${process.arch}`;
    if (process.env.REQUIRE_RUNTIMES) throw new Error(`${why}, and REQUIRE_RUNTIMES is set`);
    console.warn(`SKIPPED the ${runtime} tests (${why})`);
    return undefined;
  }
}
