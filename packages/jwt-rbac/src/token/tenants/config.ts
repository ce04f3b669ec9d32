import { configError } from "@agent-platform/common/internal";
import type { IssuerOptions, JwtAlgorithm, JwtRbacOptions } from "../../options.js";
import { type IssuerConfig, resolveIssuerEntry, TOP_LEVEL_KEY_OPTIONS } from "../keys/config.js";
import type { ClaimRules } from "../verify/claims.js";
import { DEFAULT_MAX_TENANT_ISSUERS, type IssuerResolver } from "./options.js";
import { compileTemplate, type IssuerTemplate, isTemplate, type TenantsConfig } from "./template.js";

/** Issuers known only when a token names them (templates, resolver), and how an entry becomes an issuer. */
export type TenantsSettings = TenantsConfig & {
  readonly resolveEntry: (entry: IssuerOptions, option: string) => IssuerConfig;
};

/**
 * `issuers`: a list (each entry chosen by its exact `iss`, or a template with its tenants) or a resolver.
 * Returns the listed issuers and, for templates and a resolver, the tenants' configuration.
 */
export function resolveIssuers(
  options: JwtRbacOptions,
  given: readonly IssuerOptions[] | IssuerResolver,
  rules: Omit<ClaimRules, "issuer" | "audience">,
  audience: ReadonlySet<string> | undefined,
  algorithms: readonly JwtAlgorithm[],
): { issuers: IssuerConfig[]; tenants: TenantsSettings | undefined } {
  const resolver = typeof given === "function" ? given : undefined;
  const entries = resolver === undefined ? given : [];
  if (resolver === undefined && (!Array.isArray(entries) || entries.length === 0)) {
    throw configError("jwt-rbac", "issuers must list at least one issuer, or be a resolver function");
  }
  const mixed = TOP_LEVEL_KEY_OPTIONS.filter((name) => options[name] !== undefined);
  if (mixed.length > 0) {
    throw configError(
      "jwt-rbac",
      `issuers excludes the top-level ${mixed.join(", ")}: give keys and issuer inside each issuers entry`,
    );
  }
  const resolveEntry = (entry: IssuerOptions, option: string) =>
    resolveIssuerEntry(entry, option, rules, audience, algorithms);
  const seen = new Set<string>();
  const issuers: IssuerConfig[] = [];
  const templates: IssuerTemplate[] = [];
  (entries as readonly IssuerOptions[]).forEach((entry, index) => {
    const option = `issuers[${index}]`;
    if (isTemplate(entry)) {
      const template = compileTemplate(entry, option);
      // Checked once with a sample tenant, so a bad template fails at construction, not at its first token.
      resolveEntry(
        {
          ...entry,
          issuer: entry.issuer.replace(/\{[^}]*\}/, "tenant"),
          jwksUrl: entry.jwksUrl?.replace(/\{[^}]*\}/g, "tenant"),
        } as IssuerOptions,
        option,
      );
      templates.push(template);
      return;
    }
    if (seen.has(entry?.issuer))
      throw configError("jwt-rbac", `${option}: issuer "${entry.issuer}" is listed twice`);
    seen.add(entry?.issuer);
    if (entry?.tenants !== undefined)
      throw configError("jwt-rbac", `${option}.tenants is only for a template issuer ({placeholder})`);
    issuers.push(resolveEntry(entry, option));
  });
  const max = options.maxTenantIssuers ?? DEFAULT_MAX_TENANT_ISSUERS;
  if (!Number.isSafeInteger(max) || max <= 0)
    throw configError("jwt-rbac", "maxTenantIssuers must be a positive integer");
  const tenants =
    templates.length === 0 && resolver === undefined ? undefined : { templates, resolver, max, resolveEntry };
  return { issuers, tenants };
}
