/**
 * The origin a request was sent to, as this server is known to its clients: what a DPoP proof's `htu` names
 * (with the routed path) and what a same-origin `Origin` header carries. One rule for every adapter:
 *
 * - `publicOrigin` when configured (a fixed origin, or a function of the request for a trusted proxy serving
 *   several hosts);
 * - else the scheme the request arrived on and its `Host` header, which must be exactly one host
 *   (`name[:port]`, `IPv4[:port]` or `[IPv6][:port]`): no path, query, fragment, userinfo, whitespace or
 *   control characters, and never two (readers join a repeated header with ", ", which no host contains).
 *
 * The authority of an absolute-form request target (`GET https://other.example/x HTTP/1.1`) is never used:
 * only its path is, which is also what the frameworks route on.
 */
import type { Logger } from "@agent-platform/common";
import { httpUrl } from "../http-url.js";
import { type HeadersInput, readHeader } from "./headers.js";

/** What a `publicOrigin` function is given: the request's method and a case-insensitive header reader. */
export interface PublicOriginRequest {
  readonly method: string;
  /** The header's value; a repeated header's values joined with ", "; `undefined` when absent. */
  header(name: string): string | undefined;
}

/**
 * `publicOrigin`: the origin clients address this server by (`https://api.example.com`), or a function
 * answering it per request (only for a trusted proxy that sets the header it reads): `undefined` or
 * anything that is not an origin refuses the request's DPoP proof.
 */
export type PublicOrigin = string | ((request: PublicOriginRequest) => string | undefined);

// A host as a Host header may carry it: a name or IPv4 of letters, digits, `.`, `-`, `_`, or a bracketed IPv6,
// then an optional port. Deliberately narrower than RFC 3986's reg-name (no sub-delims, no percent-escapes):
// `,` is where readers join a repeated header, and nothing a real client sends needs the others.
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** `scheme://host[:port]` as browsers serialise origins, or `undefined` for anything else. */
export function parseOrigin(value: unknown): string | undefined {
  const url = httpUrl(value, 300);
  // Nothing but the origin (a trailing "/" allowed): no userinfo, path, query or fragment.
  return url !== undefined && url.origin === (value as string).replace(/\/$/, "").toLowerCase()
    ? url.origin
    : undefined;
}

/** The origin of a request from the scheme it arrived on and its `Host` header; `undefined` unless both are valid. */
export function hostOrigin(scheme: string | undefined, host: string | undefined): string | undefined {
  if (host === undefined || !HOST.test(host)) return undefined;
  const bare = scheme?.endsWith(":") ? scheme.slice(0, -1) : scheme;
  if (bare !== "http" && bare !== "https") return undefined;
  let url: URL;
  try {
    url = new URL(`${bare}://${host}`);
  } catch {
    return undefined;
  }
  return url.origin === "null" ? undefined : url.origin;
}

/**
 * The scheme of the connection a request arrived on, on @hono/node-server (whose `env.incoming` is Node's
 * `IncomingMessage`): `https` over TLS, else `http`, whatever an absolute-form request target says. Anywhere else
 * `undefined`: the runtime's request URL says it.
 */
export function connectionScheme(env: unknown): string | undefined {
  const incoming =
    typeof env === "object" && env !== null ? (env as { incoming?: unknown }).incoming : undefined;
  if (typeof incoming !== "object" || incoming === null || !("socket" in incoming)) return undefined;
  const socket = (incoming as { socket?: { encrypted?: unknown } | null }).socket;
  return socket?.encrypted === true ? "https" : "http";
}

/** The scheme of an absolute URL (`http` or `https`), `undefined` for anything else. */
export function schemeOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (url.startsWith("https://")) return "https";
  if (url.startsWith("http://")) return "http";
  return undefined;
}

/**
 * The path of a request target without query or fragment: as is for the origin form (`/a/b?q`), the path after
 * the authority for the absolute form (`http://host/a/b`, `/` when it has none); `undefined` for any other form.
 */
export function targetPath(target: string | undefined): string | undefined {
  if (target === undefined) return undefined;
  let start = 0;
  if (!target.startsWith("/")) {
    const scheme = schemeOf(target);
    if (scheme === undefined) return undefined;
    const authority = scheme.length + 3;
    const slash = target.indexOf("/", authority);
    const query = target.indexOf("?", authority);
    const hash = target.indexOf("#", authority);
    const ends = [slash, query, hash].filter((at) => at >= 0);
    const end = ends.length === 0 ? target.length : Math.min(...ends);
    if (end !== slash) return "/";
    start = slash;
  }
  let end = target.length;
  const query = target.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = target.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return target.slice(start, end);
}

/** A request field that is a value or a function answering it. */
type Field = string | (() => string | undefined) | undefined;

/** The parts of a request its origin is read from (`AuthRequest`'s). */
export interface OriginRequest {
  readonly method: string;
  readonly headers: HeadersInput;
  readonly origin?: Field;
  readonly url?: Field;
  readonly scheme?: Field;
}

/** A request's own origin, for the cross-site check and for a DPoP proof's `htu`. */
export interface RequestOrigins {
  /** The cross-site check's own origin: an adapter's own, unless `publicOrigin` says it. */
  csrf(request: OriginRequest): string | undefined;
  /** The URL a DPoP proof must name: the request's origin and the path it was routed on, never a query. */
  proofUrl(request: OriginRequest): string | undefined;
}

function fieldValue(field: Field): string | undefined {
  return typeof field === "function" ? field() : field;
}

/** The rule above over the resolved `publicOrigin`; a function answering no origin is warned about once. */
export function requestOrigins(publicOrigin: PublicOrigin | undefined, logger: Logger): RequestOrigins {
  let warnedPublicOrigin = false;

  /** `publicOrigin` as a function: its answer for this request, when it is an origin. */
  function askPublicOrigin(
    answer: (request: PublicOriginRequest) => string | undefined,
    request: OriginRequest,
  ): string | undefined {
    let origin: string | undefined;
    try {
      origin = parseOrigin(
        answer({ method: request.method, header: (name) => readHeader(request.headers, name.toLowerCase()) }),
      );
    } catch {
      origin = undefined;
    }
    if (origin === undefined && !warnedPublicOrigin) {
      warnedPublicOrigin = true;
      logger.warn(
        "jwt-rbac: publicOrigin() answered no origin (scheme://host[:port]) for a request; its DPoP proof is refused",
      );
    }
    return origin;
  }

  /** The origin this request was sent to. */
  function ownOrigin(request: OriginRequest): string | undefined {
    if (typeof publicOrigin === "string") return publicOrigin;
    if (publicOrigin !== undefined) return askPublicOrigin(publicOrigin, request);
    const scheme = fieldValue(request.scheme);
    const url = scheme === undefined ? fieldValue(request.url) : undefined;
    return hostOrigin(scheme ?? schemeOf(url), readHeader(request.headers, "host"));
  }

  return {
    csrf(request) {
      if (publicOrigin === undefined && request.origin !== undefined) return fieldValue(request.origin);
      return ownOrigin(request);
    },
    proofUrl(request) {
      const path = targetPath(fieldValue(request.url));
      const origin = path === undefined ? undefined : ownOrigin(request);
      return origin === undefined ? undefined : origin + path;
    },
  };
}
