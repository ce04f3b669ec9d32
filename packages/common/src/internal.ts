/**
 * What the agent-platform packages share among themselves and no user needs: `@agent-platform/common/internal`,
 * for the sibling packages only, outside semantic versioning (it changes with them, in the same release).
 */
export { configError } from "./config-error.js";
export { loggerOption, SILENT_LOGGER } from "./logger.js";
export { type NodeRawHeaders, nodeHeaderReader } from "./node-headers.js";
export { readStreamWithin } from "./read-within.js";
export {
  inSpan,
  SPAN_ERROR,
  type SpanAttributeValue,
  SpanKinds,
  type SpanOptions,
  type TraceContext,
  type Tracer,
  type TraceSpan,
  traceContextOf,
  traceparentOf,
  tracerFor,
} from "./tracing.js";
