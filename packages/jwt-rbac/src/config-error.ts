import { ConfigError } from "@agent-platform/common";

/**
 * Invalid configuration, thrown at construction (or by `ready`), never per request: the platform's one
 * `ConfigError`, naming this package as the component.
 */
export function configError(message: string): ConfigError {
  return new ConfigError(message, { component: "jwt-rbac" });
}
