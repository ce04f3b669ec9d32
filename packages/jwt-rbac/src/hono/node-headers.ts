import type { HeadersInput } from "../index.js";

/** The part of Node's `IncomingMessage` read here: `rawHeaders` alternates names and values, as received. */
interface NodeIncoming {
  readonly rawHeaders: readonly string[];
}

function isNodeIncoming(value: unknown): value is NodeIncoming {
  return typeof value === "object" && value !== null && Array.isArray((value as NodeIncoming).rawHeaders);
}

/**
 * The request headers without building a WHATWG `Headers`: on @hono/node-server, `c.env.incoming` is
 * Node's `IncomingMessage`, and reading `c.req.raw.headers` would construct a `Headers` from it on
 * every request. Repeated headers are joined with ", " exactly as that `Headers` would join them (so
 * two `Authorization` headers stay one malformed value, not "the first one wins" as in
 * `IncomingMessage.headers`). Anywhere else (Bun, Deno, Workers, `app.request()`) this is undefined.
 */
export function nodeRequestHeaders(env: unknown): HeadersInput | undefined {
  const incoming =
    typeof env === "object" && env !== null ? (env as { incoming?: unknown }).incoming : undefined;
  if (!isNodeIncoming(incoming)) return undefined;
  const raw = incoming.rawHeaders;
  return {
    get(lowerName: string): string | null {
      let joined: string | null = null;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const name = raw[i] as string;
        if (name.length === lowerName.length && name.toLowerCase() === lowerName) {
          const value = raw[i + 1] as string;
          joined = joined === null ? value : `${joined}, ${value}`;
        }
      }
      return joined;
    },
  };
}
