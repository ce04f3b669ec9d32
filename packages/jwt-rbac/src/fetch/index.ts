import { configError } from "@agent-platform/common/internal";
import type { JWTPayload } from "jose";
import {
  type AuthError,
  type AuthState,
  createJwtAuth,
  isAuthError,
  type JwtAuth,
  type JwtRbacOptions,
} from "../index.js";
import { canonicalPath } from "../rbac/canonical-path.js";
import { connectionScheme } from "../token/index.js";

/** `withJwtRbac` options: the core options and where the handler is mounted. */
export interface FetchJwtRbacOptions extends JwtRbacOptions {
  /**
   * Where the wrapped handler is mounted (`/api`): mappings and exclusions are matched on the path
   * below it, and a request outside it is refused. Default: the whole path.
   */
  basePath?: string;
}

export type { AuthState, JwtRbacOptions } from "../index.js";

/** The error answer as a Fetch `Response` (status, JSON body, `WWW-Authenticate`). */
export function errorResponse(error: AuthError): Response {
  return new Response(error.body, { status: error.status, headers: error.headers });
}

/** Headers the core asks to add to a success answer (`DPoP-Nonce`), by the state they came with. */
const responseHeaders = new WeakMap<object, Readonly<Record<string, string>>>();

/** The response with `headers` added; a copy when its headers are immutable (a `fetch()` response). */
function withHeaders(response: Response, headers: Readonly<Record<string, string>>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
    return copy;
  }
}

/** A `basePath` option, checked once: it must itself be a valid path. */
function checkedBasePath(basePath: string | undefined): string | undefined {
  if (basePath === undefined) return undefined;
  const canonical = canonicalPath(basePath);
  if (isAuthError(canonical)) throw configError("jwt-rbac", `basePath "${basePath}": ${canonical.detail}`);
  return canonical.path;
}

/**
 * The state of a request, or the error `Response` to return as is. The path is the request URL's
 * pathname as received (still percent-encoded), below `basePath` when given. `env`, the runtime's second
 * argument to the handler, tells the connection's scheme on @hono/node-server (else the request URL's is used).
 */
export async function authenticateRequest<C extends object = JWTPayload>(
  request: Request,
  auth: JwtAuth<C>,
  basePath?: string,
  env?: unknown,
): Promise<AuthState<C> | Response> {
  const url = new URL(request.url);
  const result = await auth.authenticate({
    method: request.method,
    path: url.pathname,
    basePath,
    headers: request.headers,
    // The origin is `publicOrigin` or the validated Host header, never the authority of `request.url` (a runtime
    // may build it from an absolute-form request target); the scheme is the connection's where known.
    scheme: connectionScheme(env),
    url: request.url,
  });
  if (!result.ok) return errorResponse(result.error);
  if (result.headers !== undefined) responseHeaders.set(result.state, result.headers);
  return result.state;
}

/** A Fetch handler that receives the request's `AuthState` after the request, then the runtime's own arguments (`env`, `ctx`). */
export type FetchJwtRbacHandler<C extends object, A extends unknown[]> = (
  request: Request,
  auth: AuthState<C>,
  ...rest: A
) => Response | Promise<Response>;

/**
 * Wraps a Fetch handler (Bun, Deno, Cloudflare Workers, Next.js middleware). Extra arguments
 * (`env`, `ctx`, ...) are passed through after the state.
 */
export function withJwtRbac<C extends object = JWTPayload, A extends unknown[] = []>(
  handler: FetchJwtRbacHandler<C, A>,
  options: FetchJwtRbacOptions | JwtAuth<C> = {},
): ((request: Request, ...rest: A) => Promise<Response>) & { readonly auth: JwtAuth<C> } {
  let auth: JwtAuth<C>;
  let basePath: string | undefined;
  if ("authenticate" in options) auth = options;
  else {
    const { basePath: base, ...coreOptions } = options;
    basePath = checkedBasePath(base);
    auth = createJwtAuth<C>(coreOptions);
  }
  const wrapped = async (request: Request, ...rest: A): Promise<Response> => {
    const state = await authenticateRequest(request, auth, basePath, rest[0]);
    if (state instanceof Response) return state;
    const response = await handler(request, state, ...rest);
    const headers = responseHeaders.get(state);
    return headers === undefined ? response : withHeaders(response, headers);
  };
  return Object.assign(wrapped, { auth });
}
