import { configError } from "@agent-platform/common/internal";
import type { IssuerOptions, IssuerResolver } from "./options.js";

/** An `issuers` entry whose strings hold one `{name}` placeholder (`https://login.microsoftonline.com/{tenantid}/v2.0`). */
export interface IssuerTemplate {
  readonly option: string;
  readonly entry: IssuerOptions;
  readonly placeholder: string;
  readonly pattern: RegExp;
  readonly allowed: (tenant: string) => boolean;
  /** The issuer and `jwksUrl` filled with `PROBE` and normalised as a URL, to compare a tenant's filling with. */
  readonly normalised: readonly string[];
}

/** A tenant id that is one plain segment in any URL: what a template is normalised with. */
const PROBE = "tenant0probe9q";

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
    // Only a synchronous `true` admits: a throw, a promise (even of true) or any other value refuses.
    allowed = (tenant) => {
      try {
        const verdict: unknown = validate(tenant);
        if (verdict instanceof Promise) verdict.catch(() => undefined);
        return verdict === true;
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
    normalised: urlsOf(entry, placeholder, PROBE).map((url) => normalise(url) ?? url),
  };
}

/** The strings of an entry that are fetched from (the issuer, for discovery, and `jwksUrl`), filled with `tenant`. */
function urlsOf(entry: IssuerOptions, placeholder: string, tenant: string): string[] {
  const fill = (text: string) => text.split(`{${placeholder}}`).join(tenant);
  return entry.jwksUrl === undefined ? [fill(entry.issuer)] : [fill(entry.issuer), fill(entry.jwksUrl)];
}

function normalise(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

/**
 * Whether `tenant` fills every URL of the template as the one segment (or label) it was written as: a URL
 * parser turns `..` or `.` into another path (and would turn `%2e`, `．` or `。` into dots, which the tenant
 * pattern already refuses), so such a tenant would have keys fetched from elsewhere.
 */
function fillsInPlace(template: IssuerTemplate, tenant: string): boolean {
  if (/^\.+$/.test(tenant)) return false;
  const filled = urlsOf(template.entry, template.placeholder, tenant);
  return filled.every(
    (url, index) => normalise(url) === (template.normalised[index] as string).split(PROBE).join(tenant),
  );
}

/** The concrete issuer options for `iss`, or undefined when it does not fit the template or is not allowed. */
export function instantiate(template: IssuerTemplate, iss: string): IssuerOptions | undefined {
  const tenant = template.pattern.exec(iss)?.[1];
  // The shape first: a validator that admits dots never sees a tenant that would move the fetch elsewhere.
  if (tenant === undefined || !fillsInPlace(template, tenant) || !template.allowed(tenant)) return undefined;
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
