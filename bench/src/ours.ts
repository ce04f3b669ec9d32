import { type Alg, type KeyMaterial, SCOPE } from "./keys.js";
import { sleep } from "./stats.js";

/**
 * Our packages are loaded by name at run time and typed structurally here, so the harness builds and runs (and
 * reports a row as unavailable) while a package is still being written.
 */
export interface AuthInput {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The request URL (DPoP proofs name it). */
  url?: string;
}
export type AuthOutcome = { ok: true } | { ok: false; error: unknown };
export interface JwtAuth {
  authenticate(input: AuthInput): AuthOutcome | Promise<AuthOutcome>;
  /** What the adapters call: the answer as is when no waiting is needed. */
  authenticateNow(input: AuthInput): AuthOutcome | Promise<AuthOutcome>;
}
export type CreateJwtAuth = (options: Record<string, unknown>) => JwtAuth;
export type Unavailable = { unavailable: string };

export const BENCH_PATH = "/bench";

export interface OursConfig {
  authorization: boolean;
  cache?: false | { max: number; ttlMs: number };
}

/** The options every benchmark passes: one key, one algorithm, and with authorization one scope on the route. */
export function oursOptions(keys: KeyMaterial | { alg: Alg; verificationText: string }, config: OursConfig) {
  return {
    verificationKeys: [keys.verificationText],
    algorithm: keys.alg,
    ...(config.authorization
      ? { authorization: true, scopeMappings: { [`GET ${BENCH_PATH}`]: [SCOPE] } }
      : { authorization: false }),
    ...(config.cache === undefined ? {} : { cache: config.cache }),
  };
}

/**
 * Imports `name` from `specifier`. A package's dist/ briefly vanishes while its owner rebuilds it, so a load
 * failure is retried a few times; a missing export is not (the package simply does not have it yet).
 */
export async function loadExport<T>(specifier: string, name: string): Promise<T | Unavailable> {
  for (let attempt = 1; ; attempt++) {
    try {
      const mod = (await import(specifier)) as Record<string, unknown>;
      const value = mod[name];
      if (typeof value !== "function") return { unavailable: `${specifier} has no export ${name} yet` };
      return value as T;
    } catch (error) {
      if (attempt >= 4) return { unavailable: `${specifier} failed to load: ${(error as Error).message}` };
      await sleep(3000);
    }
  }
}

export function isUnavailable(value: unknown): value is Unavailable {
  return typeof value === "object" && value !== null && "unavailable" in value;
}

export const loadCore = () => loadExport<CreateJwtAuth>("@agent-platform/jwt-rbac", "createJwtAuth");

/** Which file a specifier resolves to here (with Node's conditions): shows that the `node` condition was taken. */
export function resolvedEntry(specifier: string): string {
  try {
    const path = new URL(import.meta.resolve(specifier)).pathname;
    const at = path.indexOf("/packages/");
    return at === -1 ? path : path.slice(at + 1);
  } catch {
    return "unresolved";
  }
}
