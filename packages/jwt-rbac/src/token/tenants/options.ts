import type { IssuerOptions } from "../../options.js";

/** `issuers` as a function: the options of the issuer a token names, or `undefined` when it is not trusted. */
export type IssuerResolver = (iss: string) => IssuerOptions | undefined | Promise<IssuerOptions | undefined>;

/** Most issuers created from templates or the resolver that are kept (least recently used dropped). Default 100. */
export const DEFAULT_MAX_TENANT_ISSUERS = 100;
/** New issuers created (resolver calls included) per second at most; past it a new `iss` is refused. */
export const TENANT_ISSUERS_PER_SECOND = 10;
/** Longest `iss` looked at. */
export const MAX_ISSUER_LENGTH = 512;
