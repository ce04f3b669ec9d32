import fc from "fast-check";
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { type AuthResult, createJwtAuthOn, type JwtAuth } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { sign, testKeys } from "./fixtures/keys.js";

// Property: whatever spelling a request path has, the core decides on it exactly as on the path the
// router behind it routes to. A path the core accepts (not a 400) gets the same answer, detail and
// listing ids included, as the router's reading of it; so no spelling routes a request to a handler
// under another route's (or no route's) rules.

const OPTIONS: JwtRbacOptions = {
  algorithm: "HS256",
  authorization: true,
  scopeMappings: { "GET /whatsapp/inbox": ["config:read"], "GET /public/*": [] },
};

const SCOPE_SETS = [
  [],
  ["agents:read"],
  ["agents:a1:run", "agents:a 1:delete"],
  ["agents:é:delete", "agents:%41:run", "config:read"],
  ["config:write"],
  ["agents:a1:read", "agents:a2:read"],
  ["platform:admin"],
] as const;

const PIECES = [
  "agents",
  "databases",
  "default",
  "all",
  "migrate",
  "migrations",
  "runs",
  "a1",
  "a 1",
  "é",
  "whatsapp",
  "inbox",
  "public",
  "health",
  "sessions",
];
const ODD = [
  "%2F",
  "%2f",
  "..",
  ".",
  "%2e",
  "%2E%2e",
  "",
  ";x=1",
  "%25",
  "%2541",
  "%41",
  "%C3%A9",
  "\\",
  "%5C",
  "%00",
  "%zz",
  "~",
  "!",
];

/** One character written raw, or as escapes in lower- or upper-case hex. */
function spelledChar(char: string) {
  const escaped = [...new TextEncoder().encode(char)]
    .map((byte) => `%${byte.toString(16).padStart(2, "0")}`)
    .join("");
  return fc.constantFrom(char, escaped, escaped.toUpperCase());
}

const segment = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .constantFrom(...PIECES)
      .chain((piece) => fc.tuple(...[...piece].map(spelledChar)).map((chars) => chars.join(""))),
  },
  { weight: 1, arbitrary: fc.constantFrom(...ODD) },
);

const rawPath = fc
  .tuple(
    fc.array(segment, { minLength: 0, maxLength: 5 }),
    fc.boolean(),
    fc.constantFrom("", "?x=1", "?a=/../b", "#f"),
  )
  .map(([segments, trailing, suffix]) => `/${segments.join("/")}${trailing ? "/" : ""}${suffix}`);

const method = fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE");

function summary(result: AuthResult): string {
  if (!result.ok) return `${result.error.status} ${result.error.reason} ${result.error.detail}`;
  return `ok ${[...result.state.accessibleResourceIds].sort().join(",")}`;
}

/** What Hono routes on for a request URL: `c.req.path`, asked of Hono itself. */
const hono = new Hono().all("*", (c) => c.text(c.req.path));
async function honoPath(url: string, requestMethod: string): Promise<string> {
  return (await hono.request(url, { method: requestMethod === "HEAD" ? "GET" : requestMethod })).text();
}

/**
 * What a router that decodes everything (`%2F` included) routes on, written back as a URL path (sub-
 * delimiters raw). Such a router also takes `%3B` for `;`, which the core keeps apart (RFC 3986): a
 * literal with a reserved character then falls to the unmapped rule, denied by default. The default
 * tables have none, and the generator escapes only letters, digits, space and non-ASCII.
 */
function decodingRouterPath(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname)
      .split("/")
      .map((part) => part.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]/gu, (char) => encodeURIComponent(char)))
      .join("/");
  } catch {
    return undefined;
  }
}

let node: JwtAuth;
let web: JwtAuth;
let tokens: string[];
beforeAll(async () => {
  const keys = await testKeys();
  node = createJwtAuthOn(nodeRuntime, { ...OPTIONS, verificationKeys: [keys.hsSecret] });
  web = createJwtAuthOn(webRuntime, { ...OPTIONS, verificationKeys: [keys.hsSecret] });
  await Promise.all([node.ready, web.ready]);
  tokens = await Promise.all(
    SCOPE_SETS.map((scopes) => sign({ sub: "u", scopes: [...scopes] }, "HS256", keys.hsSecret)),
  );
});

const decide = (auth: JwtAuth, requestMethod: string, path: string, token: string) =>
  auth
    .authenticate({ method: requestMethod, path, headers: { authorization: `Bearer ${token}` } })
    .then(summary);

describe("the core decides on the path the router routes to", () => {
  it("behind Hono (through the WHATWG URL parser, as on every runtime)", async () => {
    await fc.assert(
      fc.asyncProperty(rawPath, method, fc.nat(SCOPE_SETS.length - 1), async (raw, requestMethod, scopes) => {
        const url = new URL(`http://app.test${raw}`);
        const token = tokens[scopes] as string;
        const onRaw = await decide(node, requestMethod, url.pathname, token);
        if (onRaw.startsWith("400 ")) return;
        const routed = await honoPath(url.href, requestMethod);
        expect(await decide(node, requestMethod, routed, token), `${raw} -> ${routed}`).toBe(onRaw);
      }),
      { numRuns: 400 },
    );
  });

  it("behind a router that decodes %2F too", async () => {
    await fc.assert(
      fc.asyncProperty(rawPath, method, fc.nat(SCOPE_SETS.length - 1), async (raw, requestMethod, scopes) => {
        const { pathname } = new URL(`http://app.test${raw}`);
        const token = tokens[scopes] as string;
        const onRaw = await decide(node, requestMethod, pathname, token);
        if (onRaw.startsWith("400 ")) return;
        const routed = decodingRouterPath(pathname);
        expect(routed, pathname).toBeDefined();
        expect(await decide(node, requestMethod, routed as string, token), `${pathname} -> ${routed}`).toBe(
          onRaw,
        );
      }),
      { numRuns: 400 },
    );
  });

  it("on raw, unparsed paths (as Express passes them) both builds decide identically", async () => {
    await fc.assert(
      fc.asyncProperty(rawPath, method, fc.nat(SCOPE_SETS.length - 1), async (raw, requestMethod, scopes) => {
        const token = tokens[scopes] as string;
        expect(await decide(web, requestMethod, raw, token), raw).toBe(
          await decide(node, requestMethod, raw, token),
        );
      }),
      { numRuns: 300 },
    );
  });

  it("the generator reaches refusals, mappings and passes (the property is not vacuous)", async () => {
    const seen = new Set<string>();
    for (const raw of fc.sample(rawPath, 2000)) {
      for (const token of [tokens[2], tokens[6]] as string[]) {
        seen.add((await decide(node, "POST", raw, token)).split(" ").slice(0, 2).join(" "));
      }
    }
    expect([...seen]).toEqual(
      expect.arrayContaining(["400 invalid_path", "403 insufficient_scope", "403 route_not_mapped", "ok "]),
    );
  });
});
