import type { JWTPayload } from "jose";
import {
  type AuthError,
  type AuthState,
  createJwtAuth,
  type JwtAuth,
  type JwtRbacOptions,
} from "../index.js";

export type { AuthState, JwtRbacOptions } from "../index.js";

/** The error answer as a Fetch `Response` (status, JSON body, `WWW-Authenticate`). */
export function errorResponse(error: AuthError): Response {
  return new Response(error.body, { status: error.status, headers: error.headers });
}

/** The state of a request, or the error `Response` to return as is. */
export async function authenticateRequest<C extends object = JWTPayload>(
  request: Request,
  auth: JwtAuth<C>,
): Promise<AuthState<C> | Response> {
  const url = new URL(request.url);
  const result = await auth.authenticate({
    method: request.method,
    path: url.pathname,
    headers: request.headers,
  });
  return result.ok ? result.state : errorResponse(result.error);
}

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
  options: JwtRbacOptions | JwtAuth<C> = {},
): ((request: Request, ...rest: A) => Promise<Response>) & { readonly auth: JwtAuth<C> } {
  const auth = "authenticate" in options ? options : createJwtAuth<C>(options);
  const wrapped = async (request: Request, ...rest: A): Promise<Response> => {
    const state = await authenticateRequest(request, auth);
    return state instanceof Response ? state : handler(request, state, ...rest);
  };
  return Object.assign(wrapped, { auth });
}
