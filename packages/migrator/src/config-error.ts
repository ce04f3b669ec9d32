import { ConfigError } from "@agent-platform/common";

/**
 * Options the migrator cannot work with (identifiers, migrations, timeouts, files, a run's target): the
 * platform's one `ConfigError`, naming this package as the component and, when one is at fault, the option.
 */
export function configError(message: string, option?: string): ConfigError {
  return new ConfigError(message, { component: "migrator", option });
}
