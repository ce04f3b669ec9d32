import { describe, expect, it } from "vitest";
import type { IssuerOptions } from "../../options.js";
import { compileTemplate, instantiate } from "./template.js";

// A tenant id fills the template's URLs in place, or the issuer is not made: wherever the placeholder
// stands (a path segment, a host label), an id a URL parser would rewrite is refused before the
// validator is asked, so no key set is ever fetched from another path or host.

const templates: IssuerOptions[] = [
  {
    issuer: "https://login.example/{tenant}/v2.0",
    jwksUrl: "https://login.example/{tenant}/keys",
    tenants: () => true,
  },
  { issuer: "https://login.example/{tenant}/v2.0", discovery: true, tenants: () => true },
  { issuer: "https://{tenant}.login.example/v2.0", discovery: true, tenants: () => true },
  {
    issuer: "https://login.example/t/{tenant}",
    jwksUrl: "https://keys.example/{tenant}.json",
    tenants: () => true,
  },
];

describe.each(templates)("tenant ids filling $issuer", (entry) => {
  const template = compileTemplate(entry, "issuers[0]");
  const fill = (tenant: string) => entry.issuer.replace("{tenant}", tenant);

  it("makes an issuer for a plain id, with every URL filled in place", () => {
    for (const tenant of ["contoso", "72f988bf-86f1-41af-91ab-2d7cd011db47", "a.b", "a_b", "a-b"]) {
      const made = instantiate(template, fill(tenant));
      expect(made?.issuer, tenant).toBe(fill(tenant));
      if (entry.jwksUrl !== undefined) expect(made?.jwksUrl).toBe(entry.jwksUrl.replace("{tenant}", tenant));
    }
  });

  it("refuses ids a URL parser would rewrite, or that hold anything but [A-Za-z0-9._-]", () => {
    for (const tenant of [
      ".",
      "..",
      "...",
      "%2e",
      "%2e%2e",
      ".%2E",
      "\u2024",
      "\uff0e",
      "\uff0e\uff0e",
      "\u3002",
      "",
      "a/..",
      "a\\..",
      "a?b",
      "a#b",
      "a@b",
      "a:1",
      "x".repeat(129),
    ]) {
      expect(instantiate(template, fill(tenant)), JSON.stringify(tenant)).toBeUndefined();
    }
  });
});

it("refuses, in a host, an id the parser lower-cases (it would name another issuer's host)", () => {
  const template = compileTemplate(templates[2] as IssuerOptions, "issuers[0]");
  expect(instantiate(template, "https://Contoso.login.example/v2.0")).toBeUndefined();
  expect(instantiate(template, "https://contoso.login.example/v2.0")?.issuer).toBe(
    "https://contoso.login.example/v2.0",
  );
});
