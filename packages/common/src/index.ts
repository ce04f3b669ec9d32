export { ConfigError, type ConfigErrorDetails, isConfigError } from "./config-error.js";
export type { Logger, LoggerOption, LogMethod } from "./logger.js";
export type { HeaderReader } from "./node-headers.js";
