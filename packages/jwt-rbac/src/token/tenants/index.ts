import type { Logger } from "@agent-platform/common";
import { RateBound } from "../introspection/rate.js";
import type { TrustedIssuer } from "../keys/trusted-issuer.js";
import {
  type IssuerOptions,
  type IssuerResolver,
  MAX_ISSUER_LENGTH,
  TENANT_ISSUERS_PER_SECOND,
} from "./options.js";
import { instantiate, type TenantsConfig } from "./template.js";

/** Templates and a resolver, as resolved by the configuration. */
type Slot = TrustedIssuer | undefined | Promise<TrustedIssuer | undefined>;

/**
 * Issuers known only when a token names them (Entra ID tenants, Auth0 organisations, Keycloak realms):
 * matched against templates (each with an allow-list or a validator of the tenant) or asked of the
 * resolver, then created once with their own cached, stale-tolerant remote key set and kept in an LRU of
 * `max`. A made-up `iss` that fits no allowed tenant costs a regular-expression match; creations (and
 * resolver calls) are bounded per second, so a flood of made-up issuers neither grows memory nor fetches.
 */
export class TenantIssuers {
  readonly #config: TenantsConfig;
  readonly #create: (entry: IssuerOptions, option: string) => Promise<TrustedIssuer>;
  readonly #logger: Logger;
  readonly #known = new Map<string, Slot>();
  readonly #rate = new RateBound(TENANT_ISSUERS_PER_SECOND);

  constructor(
    config: TenantsConfig,
    create: (entry: IssuerOptions, option: string) => Promise<TrustedIssuer>,
    logger: Logger,
  ) {
    this.#config = config;
    this.#create = create;
    this.#logger = logger;
  }

  get size(): number {
    return this.#known.size;
  }

  /** The issuer a token's unverified `iss` names, if it is trusted. */
  get(iss: unknown, nowMs: number): Slot {
    if (typeof iss !== "string" || iss.length > MAX_ISSUER_LENGTH) return undefined;
    const known = this.#known.get(iss);
    if (known !== undefined || this.#known.has(iss)) {
      // Most recently used last: the first entry is the one to drop.
      this.#known.delete(iss);
      this.#known.set(iss, known);
      return known;
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
    if (!this.#rate.take(nowMs)) {
      this.#logger.warn(
        `jwt-rbac: more than ${TENANT_ISSUERS_PER_SECOND} new issuers a second; this one is refused for now`,
      );
      return undefined;
    }
    const slot = this.#make(iss, entry, option).then((trusted) => {
      // Settled: the promise is replaced by its value, so later tokens are answered synchronously.
      if (this.#known.get(iss) === slot) this.#known.set(iss, trusted);
      return trusted;
    });
    this.#known.set(iss, slot);
    if (this.#known.size > this.#config.max) {
      for (const oldest of this.#known.keys()) {
        this.#known.delete(oldest);
        break;
      }
    }
    return slot;
  }

  async #make(
    iss: string,
    fromTemplate: IssuerOptions | undefined,
    option: string,
  ): Promise<TrustedIssuer | undefined> {
    try {
      const entry = fromTemplate ?? (await (this.#config.resolver as IssuerResolver)(iss));
      if (entry === undefined || entry === null) return undefined;
      if (entry.issuer !== iss) {
        this.#logger.warn(`jwt-rbac: ${option} answered for another issuer than the token's; refused`);
        return undefined;
      }
      return await this.#create(entry, option);
    } catch (error) {
      // Not remembered: the next token naming this issuer asks again (within the rate bound).
      this.#known.delete(iss);
      this.#logger.warn(`jwt-rbac: ${option}: issuer not usable (${(error as Error)?.message ?? "error"})`);
      return undefined;
    }
  }
}
