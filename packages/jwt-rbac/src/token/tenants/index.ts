import type { Logger } from "@agent-platform/common";
import { RateBound } from "../introspection/rate.js";
import type { TrustedIssuer } from "../keys/trusted-issuer.js";
import {
  type IssuerOptions,
  type IssuerResolver,
  MAX_ISSUER_LENGTH,
  MAX_REFUSED_ISSUERS,
  REFUSED_ISSUER_MS,
  RESOLVER_CALLS_PER_SECOND,
  TENANT_ISSUERS_PER_SECOND,
} from "./options.js";
import { instantiate, type TenantsConfig } from "./template.js";

type Made = TrustedIssuer | undefined;

/** Issuers being resolved or created at once, at most (a resolver that never answers holds no more). */
const MAX_PENDING = 256;
/** A repeated warning (a flood) is logged at most this often. */
const WARN_EVERY_MS = 60_000;

/** Sets `key` last in an LRU of `max` entries, dropping the least recently used. */
function keep<V>(map: Map<string, V>, max: number, key: string, value: V): void {
  map.delete(key);
  if (map.size >= max) {
    for (const oldest of map.keys()) {
      map.delete(oldest);
      break;
    }
  }
  map.set(key, value);
}

/**
 * Issuers known only when a token names them (Entra ID tenants, Auth0 organisations, Keycloak realms):
 * matched against templates (each with an allow-list or a validator of the tenant) or asked of the
 * resolver, then created once with their own cached, stale-tolerant remote key set, fetched when created.
 *
 * Floods of made-up issuers: one that fits no allowed tenant costs a regular-expression match and leaves
 * nothing behind. One the resolver refuses, or whose keys cannot be fetched, is remembered as refused
 * (bounded, for a minute) and takes no slot. Resolver calls and creations (the identity provider's
 * fetches) are bounded per second. Created issuers wait as candidates (an LRU of `max`) until their keys
 * verify a token; then they move to the issuers kept (another LRU of `max`), which only issuers that
 * verified a token can push out: strangers never evict a tenant in use.
 */
export class TenantIssuers {
  readonly #config: TenantsConfig;
  readonly #create: (entry: IssuerOptions, option: string) => Promise<TrustedIssuer>;
  readonly #logger: Logger;
  /** Issuers whose keys verified a token. */
  readonly #proven = new Map<string, TrustedIssuer>();
  /** Issuers created whose keys have verified nothing yet. */
  readonly #candidates = new Map<string, TrustedIssuer>();
  /** One attempt per issuer at a time. */
  readonly #pending = new Map<string, Promise<Made>>();
  /** Issuers refused after asking (resolver, identity provider): until when. */
  readonly #refused = new Map<string, number>();
  readonly #createRate = new RateBound(TENANT_ISSUERS_PER_SECOND);
  readonly #resolveRate = new RateBound(RESOLVER_CALLS_PER_SECOND);
  readonly #warned = new Map<string, number>();

  constructor(
    config: TenantsConfig,
    create: (entry: IssuerOptions, option: string) => Promise<TrustedIssuer>,
    logger: Logger,
  ) {
    this.#config = config;
    this.#create = create;
    this.#logger = logger;
  }

  /** Issuers kept: those that verified a token and the candidates. */
  get size(): number {
    return this.#proven.size + this.#candidates.size;
  }

  /** The issuer a token's unverified `iss` names, if it is trusted. */
  get(iss: unknown, nowMs: number): Made | Promise<Made> {
    if (typeof iss !== "string" || iss.length > MAX_ISSUER_LENGTH) return undefined;
    const proven = this.#proven.get(iss);
    if (proven !== undefined) {
      keep(this.#proven, this.#config.max, iss, proven);
      return proven;
    }
    const candidate = this.#candidates.get(iss);
    if (candidate !== undefined) return candidate;
    const pending = this.#pending.get(iss);
    if (pending !== undefined) return pending;
    const refusedUntil = this.#refused.get(iss);
    if (refusedUntil !== undefined) {
      if (refusedUntil > nowMs) return undefined;
      this.#refused.delete(iss);
    }
    let entry: IssuerOptions | undefined;
    let option = "issuers (resolver)";
    for (const template of this.#config.templates) {
      entry = instantiate(template, iss);
      if (entry !== undefined) {
        option = template.option;
        break;
      }
    }
    if (entry === undefined && this.#config.resolver === undefined) return undefined;
    if (this.#pending.size >= MAX_PENDING) {
      this.#warn(
        "pending",
        `jwt-rbac: ${MAX_PENDING} new issuers are being resolved at once; more are refused for now`,
      );
      return undefined;
    }
    if (entry === undefined ? !this.#resolveRate.take(nowMs) : !this.#mayCreate(nowMs)) {
      if (entry === undefined)
        this.#warn(
          "resolve",
          `jwt-rbac: more than ${RESOLVER_CALLS_PER_SECOND} issuer resolver calls a second; new issuers are refused for now`,
        );
      return undefined;
    }
    const attempt = this.#make(iss, entry, option).finally(() => this.#pending.delete(iss));
    this.#pending.set(iss, attempt);
    return attempt;
  }

  #mayCreate(nowMs: number): boolean {
    if (this.#createRate.take(nowMs)) return true;
    this.#warn(
      "create",
      `jwt-rbac: more than ${TENANT_ISSUERS_PER_SECOND} new issuers a second; new issuers are refused for now`,
    );
    return false;
  }

  #warn(kind: string, message: string): void {
    const now = Date.now();
    if (now - (this.#warned.get(kind) ?? Number.NEGATIVE_INFINITY) < WARN_EVERY_MS) return;
    this.#warned.set(kind, now);
    this.#logger.warn(message);
  }

  #refuse(iss: string): undefined {
    keep(this.#refused, MAX_REFUSED_ISSUERS, iss, Date.now() + REFUSED_ISSUER_MS);
    return undefined;
  }

  /** Called when the issuer's keys verified a token: kept among the issuers in use from now on. */
  #prove(iss: string, issuer: TrustedIssuer): void {
    if (this.#candidates.get(iss) === issuer) this.#candidates.delete(iss);
    keep(this.#proven, this.#config.max, iss, issuer);
  }

  async #make(iss: string, fromTemplate: IssuerOptions | undefined, option: string): Promise<Made> {
    try {
      let entry = fromTemplate;
      if (entry === undefined) {
        entry = (await (this.#config.resolver as IssuerResolver)(iss)) ?? undefined;
        if (entry === undefined) return this.#refuse(iss);
        if (entry.issuer !== iss) {
          this.#warn("other", `jwt-rbac: ${option} answered for another issuer than the token's; refused`);
          return this.#refuse(iss);
        }
        if (!this.#mayCreate(Date.now())) return undefined;
      }
      const trusted = await this.#create(entry, option);
      const remote = trusted.remote;
      if (remote !== undefined) {
        // Fetched now, within the creation bound: an issuer without keys is refused, not kept.
        await remote.refresh(Date.now());
        const keys = remote.keys;
        if (keys === undefined || keys.all.size === 0) {
          this.#warn(
            "keys",
            `jwt-rbac: ${option}: an issuer's keys could not be fetched; refused for a minute`,
          );
          return this.#refuse(iss);
        }
      }
      let proven = false;
      const issuer: TrustedIssuer = {
        ...trusted,
        onVerified: () => {
          if (proven) return;
          proven = true;
          this.#prove(iss, issuer);
        },
      };
      keep(this.#candidates, this.#config.max, iss, issuer);
      return issuer;
    } catch (error) {
      // Not remembered: the next token naming this issuer asks again (within the rate bound).
      this.#warn("error", `jwt-rbac: ${option}: issuer not usable (${(error as Error)?.message ?? "error"})`);
      return undefined;
    }
  }
}
