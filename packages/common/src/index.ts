export { ConfigError, type ConfigErrorDetails, isConfigError } from "./config-error.js";
export { type Logger, type LoggerOption, type LogMethod, loggerOption, SILENT_LOGGER } from "./logger.js";
export { type HeaderReader, type NodeRawHeaders, nodeHeaderReader } from "./node-headers.js";
export { readStreamWithin } from "./read-within.js";
