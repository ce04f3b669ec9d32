type Env = Readonly<Record<string, string | undefined>>;

/**
 * The one place that reads the environment. Guarded so the core runs where `process` does not exist
 * (Workers, browsers); there every option must be passed explicitly.
 */
export function readEnv(name: string, env: Env | undefined = processEnv()): string | undefined {
  const value = env?.[name];
  return value === undefined || value === "" ? undefined : value;
}

function processEnv(): Env | undefined {
  if (typeof process === "undefined" || typeof process.env !== "object" || process.env === null)
    return undefined;
  return process.env;
}

/**
 * The key sources `createJwtAuth` takes from the environment when no key option is given: `JWT_VERIFICATION_KEY`
 * (one PEM key or secret; `\n` escapes are read as newlines in PEM text) and `JWT_JWKS_FILE`. For an application
 * that builds its options from its own configuration, so both read the same variables by the same rule (an empty
 * value is unset). Default `env`: `process.env` where it exists.
 */
export function keySourcesFromEnv(env?: Env): { verificationKeys?: string[]; jwksFile?: string } {
  const source = env ?? processEnv();
  const key = readEnv("JWT_VERIFICATION_KEY", source);
  const jwksFile = readEnv("JWT_JWKS_FILE", source);
  return {
    ...(key === undefined ? {} : { verificationKeys: [key] }),
    ...(jwksFile === undefined ? {} : { jwksFile }),
  };
}
