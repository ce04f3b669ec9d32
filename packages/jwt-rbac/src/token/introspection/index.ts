import type { Logger } from "@agent-platform/common";
import { configError } from "@agent-platform/common/internal";
import { AuthError, invalidTokenError, REALM } from "../../errors.js";
import { type FetchLimits, isAllowedRemoteUrl } from "../keys/fetch-json.js";
import { type ClaimRules, checkClaims } from "../verify/claims.js";
import { discoverIntrospectionEndpoint, introspect } from "./endpoint.js";
import {
  type ClientAuth,
  DEFAULT_INTROSPECTION,
  type IntrospectionOptions,
  type TokenVerifierHook,
} from "./options.js";
import { RateBound } from "./rate.js";

/** `introspection` and `tokenVerifier`, resolved once. */
export interface OpaqueConfig {
  readonly hook: TokenVerifierHook | undefined;
  readonly introspection:
    | {
        readonly url: URL | undefined;
        readonly discovery: string | undefined;
        readonly clientAuth: ClientAuth;
        readonly tokenTypes: ReadonlySet<"opaque" | "jwt">;
        readonly maxPerSecond: number;
        readonly unavailableStatus: 401 | 503;
        readonly limits: FetchLimits;
        /** Time and audience rules an introspection answer is held to. */
        readonly rules: ClaimRules;
      }
    | undefined;
  readonly cacheMaxMs: number;
  readonly negativeMs: number;
  readonly cacheMax: number;
  readonly maxTokenLength: number;
  /** Time rules a hook's claims are held to. */
  readonly hookRules: ClaimRules;
}

function positive(value: number, name: string, max = Number.POSITIVE_INFINITY): number {
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw configError(
      "jwt-rbac",
      `${name} must be a positive number${max === Number.POSITIVE_INFINITY ? "" : ` of at most ${max}`}`,
    );
  }
  return value;
}

function checkClientAuth(auth: ClientAuth | undefined): ClientAuth {
  const method = auth?.method;
  if (auth === undefined || typeof auth.clientId !== "string" || auth.clientId === "") {
    throw configError("jwt-rbac", "introspection.clientAuth needs a method and a clientId");
  }
  if (method === "client_secret_basic" || method === "client_secret_post") {
    if (typeof auth.clientSecret !== "string" || auth.clientSecret === "") {
      throw configError(
        "jwt-rbac",
        `introspection.clientAuth: ${method} needs a clientSecret (an unset environment variable?)`,
      );
    }
    return auth;
  }
  if (method === "private_key_jwt") {
    if (typeof auth.privateKey !== "object" || auth.privateKey === null) {
      throw configError(
        "jwt-rbac",
        "introspection.clientAuth: private_key_jwt needs a privateKey (CryptoKey or private JWK)",
      );
    }
    return auth;
  }
  throw configError(
    "jwt-rbac",
    `introspection.clientAuth.method "${String(method)}" is not client_secret_basic, client_secret_post or private_key_jwt`,
  );
}

export function resolveOpaque(
  options: IntrospectionOptions | undefined,
  hook: TokenVerifierHook | undefined,
  rules: ClaimRules,
  limits: FetchLimits,
  maxTokenLength: number,
): OpaqueConfig | undefined {
  if (options === undefined && hook === undefined) return undefined;
  if (hook !== undefined && typeof hook !== "function")
    throw configError("jwt-rbac", "tokenVerifier must be a function");
  const given = options ?? ({} as Partial<IntrospectionOptions>);
  const cacheMaxMs =
    positive(given.cacheMaxSec ?? DEFAULT_INTROSPECTION.cacheMaxSec, "introspection.cacheMaxSec") * 1000;
  const negativeMs =
    positive(
      given.negativeCacheSec ?? DEFAULT_INTROSPECTION.negativeCacheSec,
      "introspection.negativeCacheSec",
      DEFAULT_INTROSPECTION.maxNegativeCacheSec,
    ) * 1000;
  const cacheMax = given.cacheMax ?? DEFAULT_INTROSPECTION.cacheMax;
  if (!Number.isSafeInteger(cacheMax) || cacheMax <= 0)
    throw configError("jwt-rbac", "introspection.cacheMax must be a positive integer");
  let introspection: OpaqueConfig["introspection"];
  if (options !== undefined) {
    if ((options.url === undefined) === (options.discovery === undefined)) {
      throw configError("jwt-rbac", "introspection needs exactly one of url and discovery");
    }
    let url: URL | undefined;
    if (options.url !== undefined) {
      try {
        url = new URL(options.url);
      } catch {
        throw configError("jwt-rbac", `introspection.url "${options.url}" is not a URL`);
      }
      if (!isAllowedRemoteUrl(url))
        throw configError(
          "jwt-rbac",
          "introspection.url must use https (plain http is accepted only on loopback)",
        );
    }
    const tokenTypes = new Set<"opaque" | "jwt">(options.tokenTypes ?? ["opaque"]);
    if (tokenTypes.size === 0 || [...tokenTypes].some((type) => type !== "opaque" && type !== "jwt")) {
      throw configError("jwt-rbac", 'introspection.tokenTypes must list "opaque", "jwt" or both');
    }
    const unavailableStatus = options.unavailableStatus ?? 401;
    if (unavailableStatus !== 401 && unavailableStatus !== 503) {
      throw configError("jwt-rbac", "introspection.unavailableStatus must be 401 or 503");
    }
    introspection = {
      url,
      discovery: options.discovery,
      clientAuth: checkClientAuth(options.clientAuth),
      tokenTypes,
      maxPerSecond: positive(
        options.maxPerSecond ?? DEFAULT_INTROSPECTION.maxPerSecond,
        "introspection.maxPerSecond",
      ),
      unavailableStatus,
      limits,
      rules,
    };
  }
  return {
    hook,
    introspection,
    cacheMaxMs,
    negativeMs,
    cacheMax,
    maxTokenLength,
    hookRules: { ...rules, audience: undefined, issuer: undefined },
  };
}

/** An accepted opaque token: its claims, trusted until `notAfterMs`. */
export interface OpaqueClaims {
  readonly claims: Record<string, unknown>;
  readonly notAfterMs: number;
}

export type OpaqueOutcome = OpaqueClaims | AuthError;

/** A refusal (inactive, or active but refused by the claim rules), remembered until `expiresAt`. */
interface Refused {
  readonly outcome: AuthError;
  readonly expiresAt: number;
}

/**
 * An active answer: served as it is until `freshUntil` (`min(exp, answer + cacheMaxSec)`); after that the
 * endpoint is asked again, and while the introspection budget is spent the answer is still served until
 * `staleUntil` (`min(exp, freshUntil + cacheMaxSec)`).
 */
interface Active {
  readonly outcome: OpaqueClaims;
  readonly freshUntil: number;
  readonly staleUntil: number;
}

const inactive = () => invalidTokenError("token_inactive", "Invalid token: the token is not active");

/** A JWS has exactly two dots; anything else is opaque. */
export function kindOf(token: string): "jwt" | "opaque" {
  const first = token.indexOf(".");
  if (first < 0) return "opaque";
  const second = token.indexOf(".", first + 1);
  return second > 0 && token.indexOf(".", second + 1) < 0 ? "jwt" : "opaque";
}

/** Most characters of token text the refusals remembered hold in all (made-up tokens may be `maxTokenLength` long). */
export const MAX_REFUSED_CHARS = 4 * 1024 * 1024;

/**
 * Answers by token text, bounded by count and by the characters of the tokens held, the oldest dropped first:
 * a flood of made-up tokens of the longest accepted length holds no more memory than one of short ones.
 */
class Remembered<V> {
  readonly #entries = new Map<string, V>();
  readonly #max: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(max: number, maxChars: number) {
    this.#max = max;
    this.#maxChars = maxChars;
  }

  get(token: string): V | undefined {
    return this.#entries.get(token);
  }

  has(token: string): boolean {
    return this.#entries.has(token);
  }

  delete(token: string): void {
    if (this.#entries.delete(token)) this.#chars -= token.length;
  }

  set(token: string, value: V): void {
    this.delete(token);
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size < this.#max && this.#chars + token.length <= this.#maxChars) break;
      this.delete(oldest);
    }
    this.#entries.set(token, value);
    this.#chars += token.length;
  }
}

/**
 * Tokens verified by asking: the `tokenVerifier` hook (first-party opaque tokens), then the RFC 7662
 * endpoint. Answers are remembered (active ones until `min(exp, now + cacheMaxSec)`, inactive ones
 * briefly, each kind in its own bounded map so refusals never push out an active answer), one question
 * per token is in flight, and questions to the endpoint go out at a bounded rate, in two shares: half of
 * `maxPerSecond` for tokens never answered active, half (and whatever of the other half is unspent) for
 * asking again about tokens that were. A flood of made-up tokens costs the endpoint at most
 * `maxPerSecond`, each such token a refusal, and never a known token's refresh: when even that budget is
 * spent, a token that was active is served its last answer for at most another `cacheMaxSec`.
 */
export class OpaqueTokens {
  readonly #config: OpaqueConfig;
  readonly #logger: Logger;
  readonly #active: Remembered<Active>;
  readonly #refused: Remembered<Refused>;
  readonly #inflight = new Map<string, Promise<OpaqueOutcome>>();
  /** Questions about tokens never answered active. */
  readonly #unknownRate: RateBound | undefined;
  /** Questions about tokens answered active before (their answer is past `freshUntil`). */
  readonly #knownRate: RateBound | undefined;
  #endpoint: Promise<URL> | undefined;
  #failing = false;

  constructor(config: OpaqueConfig, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
    this.#active = new Remembered(config.cacheMax, Number.POSITIVE_INFINITY);
    this.#refused = new Remembered(config.cacheMax, MAX_REFUSED_CHARS);
    const perSecond = config.introspection?.maxPerSecond;
    this.#unknownRate = perSecond === undefined ? undefined : new RateBound(perSecond / 2);
    this.#knownRate = perSecond === undefined ? undefined : new RateBound(perSecond / 2);
  }

  /** Whether this token is verified here rather than as a JWT. */
  handles(token: string): boolean {
    const kind = kindOf(token);
    if (kind === "opaque" && this.#config.hook !== undefined) return true;
    return this.#config.introspection?.tokenTypes.has(kind) ?? false;
  }

  verify(token: string, nowMs: number): OpaqueOutcome | Promise<OpaqueOutcome> {
    if (token.length > this.#config.maxTokenLength) {
      return invalidTokenError("token_too_large", "Invalid token: token too large");
    }
    const active = this.#active.get(token);
    if (active !== undefined) {
      if (active.freshUntil > nowMs) return active.outcome;
      if (active.staleUntil <= nowMs) this.#active.delete(token);
    } else {
      const refused = this.#refused.get(token);
      if (refused !== undefined) {
        if (refused.expiresAt > nowMs) return refused.outcome;
        this.#refused.delete(token);
      }
    }
    let pending = this.#inflight.get(token);
    if (pending === undefined) {
      pending = this.#ask(token, nowMs).finally(() => this.#inflight.delete(token));
      this.#inflight.set(token, pending);
    }
    return pending;
  }

  #refuse(token: string, outcome: AuthError, expiresAt: number): AuthError {
    this.#active.delete(token);
    this.#refused.set(token, { outcome, expiresAt });
    return outcome;
  }

  #accept(token: string, claims: Record<string, unknown>, rules: ClaimRules, nowMs: number): OpaqueOutcome {
    const refused = checkClaims(claims, rules, nowMs / 1000);
    if (refused !== undefined) return this.#refuse(token, refused, nowMs + this.#config.negativeMs);
    const exp = typeof claims.exp === "number" ? claims.exp * 1000 : Number.POSITIVE_INFINITY;
    const freshUntil = Math.min(exp, nowMs + this.#config.cacheMaxMs);
    const outcome = { claims, notAfterMs: freshUntil };
    this.#refused.delete(token);
    this.#active.set(token, {
      outcome,
      freshUntil,
      staleUntil: Math.min(exp, freshUntil + this.#config.cacheMaxMs),
    });
    return outcome;
  }

  /**
   * Whether a question about `token` may go to the endpoint now: a token answered active before draws on
   * its own share first, then on the other; any other token only on its own.
   */
  #mayAsk(token: string, nowMs: number): boolean {
    if (this.#active.has(token) && (this.#knownRate as RateBound).take(nowMs)) return true;
    return (this.#unknownRate as RateBound).take(nowMs);
  }

  #unavailable(why: string): AuthError {
    // Once per failure streak: a down endpoint under load must not flood the log.
    if (!this.#failing)
      this.#logger.warn(
        `jwt-rbac: token introspection unavailable (${why}); such tokens are refused until it answers`,
      );
    this.#failing = true;
    const detail = "Invalid token: the token could not be verified now, try again";
    if (this.#config.introspection?.unavailableStatus === 503) {
      return new AuthError("UNAVAILABLE", "introspection_unavailable", detail, `Bearer realm="${REALM}"`);
    }
    return invalidTokenError("introspection_unavailable", detail);
  }

  async #ask(token: string, nowMs: number): Promise<OpaqueOutcome> {
    const kind = kindOf(token);
    const { hook, introspection } = this.#config;
    if (kind === "opaque" && hook !== undefined) {
      let claims: Record<string, unknown> | null | undefined;
      try {
        claims = await hook(token);
      } catch (error) {
        return this.#unavailable(`tokenVerifier threw: ${(error as Error)?.message ?? "an error"}`);
      }
      if (claims !== null && claims !== undefined) {
        if (typeof claims !== "object" || Array.isArray(claims))
          return this.#unavailable("tokenVerifier returned no object");
        return this.#accept(token, { ...claims }, this.#config.hookRules, nowMs);
      }
    }
    if (introspection === undefined || !introspection.tokenTypes.has(kind)) {
      return this.#refuse(token, inactive(), nowMs + this.#config.negativeMs);
    }
    if (!this.#mayAsk(token, nowMs)) {
      // The budget is spent (a flood of made-up tokens, or many refreshes at once): a token that was
      // active keeps its last answer until `staleUntil`, outside the verified-token cache (asked again next time).
      const known = this.#active.get(token);
      if (known !== undefined && known.staleUntil > nowMs)
        return { claims: known.outcome.claims, notAfterMs: nowMs };
      return this.#unavailable(`more than ${introspection.maxPerSecond} introspections a second`);
    }
    let answer: Record<string, unknown> | undefined;
    try {
      const endpoint = await this.#locate();
      answer = await introspect(endpoint, token, introspection.clientAuth, introspection.limits);
    } catch (error) {
      return this.#unavailable((error as Error).message);
    }
    if (this.#failing) this.#logger.warn("jwt-rbac: token introspection answers again");
    this.#failing = false;
    const now = Date.now();
    if (answer === undefined) return this.#refuse(token, inactive(), now + this.#config.negativeMs);
    return this.#accept(token, answer, introspection.rules, now);
  }

  /** The endpoint: configured, or found by discovery once (a failed discovery is tried again next time). */
  #locate(): Promise<URL> {
    const introspection = this.#config.introspection as NonNullable<OpaqueConfig["introspection"]>;
    if (introspection.url !== undefined) return Promise.resolve(introspection.url);
    this.#endpoint ??= discoverIntrospectionEndpoint(
      introspection.discovery as string,
      introspection.limits,
    ).catch((error: unknown) => {
      this.#endpoint = undefined;
      throw error;
    });
    return this.#endpoint;
  }
}
