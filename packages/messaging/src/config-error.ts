import { ConfigError } from "@agent-platform/common";

/**
 * Options a channel or the inbox cannot work with: the platform's one `ConfigError`, naming this package
 * as the component, with every problem found when there are several.
 */
export function configError(message: string, problems?: readonly string[]): ConfigError {
  return new ConfigError(message, { component: "messaging", problems });
}
