import { configError } from "@agent-platform/common/internal";
import type { IssuerOptions, IssuerResolver } from "./options.js";

/** An `issuers` entry whose strings hold one `{name}` placeholder (`https://login.microsoftonline.com/{tenantid}/v2.0`). */
export interface IssuerTemplate {
  readonly option: string;
  readonly entry: IssuerOptions;
  readonly placeholder: string;
  readonly pattern: RegExp;
  readonly allowed: (tenant: string) => boolean;
}

const PLACEHOLDER = /\{([a-z][a-z0-9_]*)\}/gi;
// One path segment of safe characters: a tenant id never spans segments or carries escapes.
const TENANT = "([A-Za-z0-9._-]{1,128})";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function isTemplate(entry: IssuerOptions): boolean {
  return typeof entry?.issuer === "string" && /\{[a-z][a-z0-9_]*\}/i.test(entry.issuer);
}

/** Checks and compiles a template entry; `tenants` (an allow-list or a validator) is required. */
export function compileTemplate(entry: IssuerOptions, option: string): IssuerTemplate {
  const names = [...entry.issuer.matchAll(PLACEHOLDER)].map((match) => match[1] as string);
  const placeholder = names[0] as string;
  if (names.length !== 1)
    throw configError("jwt-rbac", `${option}.issuer: a template holds exactly one {placeholder}`);
  const tenants = entry.tenants;
  let allowed: (tenant: string) => boolean;
  if (Array.isArray(tenants)) {
    const set = new Set<string>(tenants);
    allowed = (tenant) => set.has(tenant);
  } else if (typeof tenants === "function") {
    const validate = tenants;
    allowed = (tenant) => {
      try {
        return validate(tenant) === true;
      } catch {
        return false;
      }
    };
  } else {
    throw configError(
      "jwt-rbac",
      `${option}: the template "${entry.issuer}" needs tenants (an allow-list, or a validator of the ${placeholder}): without one any tenant's tokens would be trusted`,
    );
  }
  const [before, after] = entry.issuer.split(`{${placeholder}}`) as [string, string];
  return {
    option,
    entry,
    placeholder,
    pattern: new RegExp(`^${escapeRegExp(before)}${TENANT}${escapeRegExp(after)}$`),
    allowed,
  };
}

/** The concrete issuer options for `iss`, or undefined when it does not fit the template or is not allowed. */
export function instantiate(template: IssuerTemplate, iss: string): IssuerOptions | undefined {
  const tenant = template.pattern.exec(iss)?.[1];
  if (tenant === undefined || !template.allowed(tenant)) return undefined;
  const fill = (text: string | undefined) => text?.split(`{${template.placeholder}}`).join(tenant);
  const { tenants: _, ...entry } = template.entry;
  const jwksUrl = fill(entry.jwksUrl);
  return { ...entry, issuer: iss, ...(jwksUrl === undefined ? {} : { jwksUrl }) };
}

/** The resolved `issuers` templates and resolver: issuers known only when a token names them. */
export interface TenantsConfig {
  readonly templates: readonly IssuerTemplate[];
  readonly resolver: IssuerResolver | undefined;
  readonly max: number;
}
