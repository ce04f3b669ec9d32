import { nodeHeaderReader } from "@agent-platform/common/internal";
import type { HeadersInput } from "../index.js";

function isNodeIncoming(value: unknown): value is { rawHeaders: string[] } {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as { rawHeaders?: unknown }).rawHeaders)
  );
}

/**
 * The request headers without building a WHATWG `Headers`: on @hono/node-server, `c.env.incoming` is Node's
 * `IncomingMessage`, and reading `c.req.raw.headers` would construct a `Headers` from it on every request.
 * The platform's one reader over `rawHeaders` answers as that `Headers` would (two `Authorization` headers stay
 * one malformed value, not "the first one wins" as in `IncomingMessage.headers`; repeated `Cookie` headers are
 * joined with "; "). Anywhere else (Bun, Deno, Workers, `app.request()`) this is undefined.
 */
export function nodeRequestHeaders(env: unknown): HeadersInput | undefined {
  const incoming =
    typeof env === "object" && env !== null ? (env as { incoming?: unknown }).incoming : undefined;
  return isNodeIncoming(incoming) ? nodeHeaderReader(incoming) : undefined;
}
