import type { JWTPayload } from "jose";
import type { AuthError } from "./errors.js";
import type { AuthState } from "./state.js";
import type { HeadersInput } from "./token/index.js";

/** The framework-free view of a request. */
export interface AuthRequest {
  readonly method: string;
  /**
   * The path the framework routes on, relative to where the middleware is mounted, with or without a
   * query string; as received (percent-escapes and all). See `canonicalPath` for how it is read.
   */
  readonly path: string;
  /**
   * The prefix of `path` where the middleware's app is mounted (Hono `app.route`/`basePath`, Express
   * `req.baseUrl`, the Fetch adapter's `basePath`): mappings and exclusions are matched on the rest.
   */
  readonly basePath?: string | undefined;
  readonly headers: HeadersInput;
  /** Parsed cookies, if the framework has them; otherwise the `Cookie` header is read. */
  readonly cookies?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The request's own origin (`scheme://host[:port]`) for the cross-site check of a cookie-authenticated unsafe
   * request: an adapter of its own may pass it; when absent (as the bundled adapters leave it), the origin is
   * `publicOrigin`, else `scheme` and the validated `Host` header (see `publicOrigin`). A value or a function,
   * never a getter, which kept every request alive longer (bench/notes/profiles.md, "Why the code is as it is").
   */
  readonly origin?: string | (() => string | undefined) | undefined;
  /**
   * The request target as received, mount prefix included: the path (`/api/agents/a1?x`) or an absolute URL.
   * Only its path is read, for a DPoP proof's `htu`; its authority never is (the origin is `publicOrigin`, else
   * `scheme` and the validated `Host` header). Needed only for DPoP proofs, so it may be a function called only then.
   */
  readonly url?: string | (() => string | undefined) | undefined;
  /**
   * The scheme the request arrived on (`"http"` or `"https"`), as the server knows it (the connection, or a proxy
   * header the application trusts); default: the scheme of `url` when it is absolute. Not read with `publicOrigin`.
   */
  readonly scheme?: string | (() => string | undefined) | undefined;
}

/** What `authenticate` resolves to: the request's state, or the `AuthError` to answer with. */
export type AuthResult<C extends object = JWTPayload> =
  | {
      readonly ok: true;
      readonly state: AuthState<C>;
      /** Response headers the adapter adds to the answer (`DPoP-Nonce`). */
      readonly headers?: Readonly<Record<string, string>>;
    }
  | { readonly ok: false; readonly error: AuthError };
