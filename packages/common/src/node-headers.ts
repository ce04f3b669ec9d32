/**
 * Request headers as read for a decision: a WHATWG `Headers` satisfies it, and so does nodeHeaderReader, which
 * answers exactly as that `Headers` would. Names are looked up case-insensitively; repeated headers come back
 * joined as `Headers.get` joins them.
 */
export interface HeaderReader {
  get(name: string): string | null;
}

/** The part of Node's `IncomingMessage` read here: `rawHeaders` alternates names and values, as received. */
export interface NodeRawHeaders {
  readonly rawHeaders: readonly string[];
}

/** HTTP whitespace as the Fetch standard strips it from both ends of a header value. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** ":", the first character of an HTTP/2 pseudo-header, which the adapter leaves out of its `Headers`. */
const PSEUDO_HEADER_MARK = 0x3a;

function isHttpWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * The request headers of a Node request without building a WHATWG `Headers`: on @hono/node-server,
 * reading `c.req.raw.headers` constructs one from `rawHeaders` on every request (bench/notes/profiles.md,
 * "Why the code is as it is"), while a webhook or a token check reads two or three headers.
 *
 * Every lookup answers what that `Headers` would: names compare case-insensitively, HTTP/2 pseudo-headers
 * (`:path`, ...) are skipped as the adapter skips them, each value is stripped of HTTP whitespace at both
 * ends, and repeated headers are joined in the order received, with ", " (with "; " for Cookie, as undici
 * joins it). That is not what Node's own `incoming.headers` does: it keeps only the first of a repeated
 * `Content-Type` or `Authorization` (and of a dozen others), so a reader over it could accept a request
 * that `Headers` would refuse. Scanning `rawHeaders` keeps the decision identical for every header,
 * including a signature header sent twice (node-headers.test.ts compares the two over a raw socket).
 */
export function nodeHeaderReader(incoming: NodeRawHeaders): HeaderReader {
  const raw = incoming.rawHeaders;
  return {
    get(name: string): string | null {
      const lowerName = name.toLowerCase();
      // Node's Headers (undici) joins repeated Cookie headers with "; " and every other name with ", ".
      const separator = lowerName === "cookie" ? "; " : ", ";
      let joined: string | null = null;
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const rawName = raw[i] as string;
        if (rawName.length !== lowerName.length || rawName.charCodeAt(0) === PSEUDO_HEADER_MARK) continue;
        if (rawName.toLowerCase() !== lowerName) continue;
        const value = normalizedValue(raw[i + 1] as string);
        joined = joined === null ? value : `${joined}${separator}${value}`;
      }
      return joined;
    },
  };
}

/** Node's parser already trims the value; this only matters for sources that do not (HTTP/2 compat). */
function normalizedValue(value: string): string {
  if (value.length === 0) return value;
  const untrimmed =
    isHttpWhitespace(value.charCodeAt(0)) || isHttpWhitespace(value.charCodeAt(value.length - 1));
  return untrimmed ? value.replace(EDGE_WHITESPACE, "") : value;
}
