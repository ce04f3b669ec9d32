/** What a `ConfigError` says beyond its message. */
export interface ConfigErrorDetails {
  /** Who refused the configuration: `"jwt-rbac"`, `"migrator"`, `"messaging"`, or an application's name. */
  readonly component: string;
  /** The option or environment variable at fault, when a single one is. */
  readonly option?: string | undefined;
  /** Every problem found, when several are reported at once. Default: the message alone. */
  readonly problems?: readonly string[] | undefined;
  readonly cause?: unknown;
}

/**
 * Options or environment that a component cannot work with, thrown when it is set up (never per request).
 * Every agent-platform package throws this one class, so a program catches a bad configuration in one
 * place, whichever package found it; `code` is stable, the message is for people.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly code = "CONFIG_INVALID";
  readonly component: string;
  readonly option: string | undefined;
  readonly problems: readonly string[];

  constructor(message: string, details: ConfigErrorDetails) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.component = details.component;
    this.option = details.option;
    this.problems = details.problems ?? [message];
  }
}

/**
 * True for a `ConfigError` from any copy of this package: a process that loads both its ESM and its
 * CommonJS build has two classes, and `instanceof` only knows one of them.
 */
export function isConfigError(value: unknown): value is ConfigError {
  return (
    value instanceof ConfigError ||
    (value instanceof Error &&
      value.name === "ConfigError" &&
      (value as { code?: unknown }).code === "CONFIG_INVALID" &&
      typeof (value as { component?: unknown }).component === "string")
  );
}

/**
 * The `ConfigError` a package throws: `component` names the package, `option` the one option at fault, and
 * `problems` every problem when several are reported at once. The packages' one way to make one.
 */
export function configError(
  component: string,
  message: string,
  option?: string,
  problems?: readonly string[],
): ConfigError {
  return new ConfigError(message, { component, option, problems });
}
