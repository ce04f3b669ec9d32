import { beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn, type JwtAuth } from "../src/auth.js";
import { PLATFORM_POLICY } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { sign, testKeys } from "./fixtures/keys.js";
import { OWN_ROUTES, PLATFORM_256_TABLE, platformAnswer } from "./fixtures/platform-2.5.6.js";

const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];
const ADMIN = "platform:admin";

/** The 2.5.6 key as the policy writes it: `fnmatch`'s trailing `*` also matches deeper paths. */
const ourKey = (key: string) => (key.endsWith("/*") ? `${key}/**` : key);
const current = (scope: string) => scope.replace(/^system:/, "config:");

describe("the platform table against the 2.5.6 fixture", () => {
  it("holds every 2.5.6 route with its scopes (system:* written config:*), and nothing else but the project's own", () => {
    const expected: Record<string, readonly string[]> = { ...OWN_ROUTES };
    for (const [key, scopes] of Object.entries(PLATFORM_256_TABLE))
      expected[ourKey(key)] = scopes.map(current);
    expect(Object.keys(expected)).toHaveLength(Object.keys(PLATFORM_256_TABLE).length + 3);
    expect(PLATFORM_POLICY.scopeMappings).toEqual(expected);
  });

  it("names the platform's public paths, listing resources, admin scope and legacy names", () => {
    expect(PLATFORM_POLICY.excludedRoutePaths).toEqual([
      "/",
      "/health",
      "/docs",
      "/redoc",
      "/openapi.json",
      "/docs/oauth2-redirect",
    ]);
    expect(PLATFORM_POLICY.listingResources).toEqual(["agents", "teams", "workflows"]);
    expect(PLATFORM_POLICY.adminScope).toBe(ADMIN);
    expect(PLATFORM_POLICY.scopeAliases).toEqual({ system: "config" });
  });
});

interface Probe {
  method: string;
  path: string;
  scopes: string[];
}

/** Concrete requests for one 2.5.6 route, and the tokens the comparison tries on each. */
function probes(key: string, required: readonly string[]): Probe[] {
  const [method, pattern] = key.split(" ", 2) as [string, string];
  let n = 0;
  const path = pattern.replaceAll("*", () => `x${++n}`);
  const paths = [path, ...(pattern.endsWith("/*") ? [`${path}/deeper/still`] : [])];
  const [resource, action] = (required[0] as string).split(":") as [string, string];
  const context = /^\/(agents|teams|workflows)(?:\/([^/]+))?/.exec(path);
  const tokens: string[][] = [
    [...required],
    ["unrelated:read"],
    [],
    [ADMIN],
    [`${resource}:*:${action}`],
    [`${resource}:zz:${action}`],
    [`${resource}:${action}:extra`],
    [`${resource}:other`],
  ];
  if (context?.[2] !== undefined)
    tokens.push([`${context[1]}:${context[2]}:${action}`], [`${context[1]}:x9:${action}`]);
  if (context !== null && context[2] === undefined)
    tokens.push([`${resource}:a1:read`, `${resource}:a2:read`], [`${resource}:a1:read`, `${resource}:read`]);
  return paths.flatMap((p) => tokens.map((scopes) => ({ method, path: p, scopes })));
}

describe.each(RUNTIMES)("the policy answers as 2.5.6 does, verifier %s", (_name, runtime) => {
  let auth: JwtAuth;
  let secret: string;
  beforeAll(async () => {
    secret = (await testKeys()).hsSecret;
    auth = createJwtAuthOn(runtime, { algorithm: "HS256", verificationKeys: [secret], authorization: true });
    await auth.ready;
  });

  async function ours({ method, path, scopes }: Probe): Promise<string> {
    const token = await sign({ sub: "u", scopes }, "HS256", secret);
    const result = await auth.authenticate({ method, path, headers: { authorization: `Bearer ${token}` } });
    if (!result.ok) return String(result.error.status);
    const context = /^\/(agents|teams|workflows)$/.test(path) && method === "GET";
    return context ? `ok:${[...result.state.accessibleResourceIds].sort()}` : "ok";
  }

  it.each(Object.entries(PLATFORM_256_TABLE))("%s", async (key, required) => {
    for (const probe of probes(key, required)) {
      expect(await ours(probe), `${probe.method} ${probe.path} ${JSON.stringify(probe.scopes)}`).toBe(
        platformAnswer(probe.method, probe.path, probe.scopes),
      );
    }
  });

  // Where the project answers otherwise, on purpose (README "Default tables"): each difference, pinned.
  describe("deliberate differences", () => {
    it("a route no mapping covers is refused but to the admin scope (2.5.6 lets any valid token through)", async () => {
      expect(platformAnswer("GET", "/skills", [])).toBe("ok");
      expect(await ours({ method: "GET", path: "/skills", scopes: ["agents:read"] })).toBe("403");
      expect(await ours({ method: "GET", path: "/skills", scopes: [ADMIN] })).toBe("ok");
    });

    it("only GET of a listing route gets the filtered list; POST /agents without agents:write is a 403", async () => {
      expect(await ours({ method: "POST", path: "/agents", scopes: ["agents:a1:read"] })).toBe("403");
      expect(await ours({ method: "PUT", path: "/agents", scopes: [] })).toBe("403");
    });

    it("a listing counts the read scopes only (2.5.6 also counted run; the platform later fixed it)", async () => {
      expect(platformAnswer("GET", "/agents", ["agents:a1:run"])).toBe("ok:a1");
      expect(await ours({ method: "GET", path: "/agents", scopes: ["agents:a1:run"] })).toBe("ok:");
      expect(platformAnswer("GET", "/agents", ["agents:run"])).toBe("ok:*");
      expect(await ours({ method: "GET", path: "/agents", scopes: ["agents:run"] })).toBe("ok:");
    });

    it("resource:<id>:action addresses that id on every resource, not only agents, teams and workflows", async () => {
      expect(platformAnswer("GET", "/sessions/s1", ["sessions:s1:read"])).toBe("403");
      expect(await ours({ method: "GET", path: "/sessions/s1", scopes: ["sessions:s1:read"] })).toBe("ok");
      expect(await ours({ method: "GET", path: "/sessions/s2", scopes: ["sessions:s1:read"] })).toBe("403");
    });

    it("the current config:* names are accepted beside the legacy system:* ones", async () => {
      expect(platformAnswer("GET", "/config", ["config:read"])).toBe("403");
      expect(await ours({ method: "GET", path: "/config", scopes: ["config:read"] })).toBe("ok");
      expect(await ours({ method: "GET", path: "/models", scopes: ["system:read"] })).toBe("ok");
    });
  });
});

describe("the generic core", () => {
  it("names no platform route, resource or scope: src/token and src/rbac hold none", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const names = [
      ...PLATFORM_POLICY.listingResources,
      PLATFORM_POLICY.adminScope,
      ...Object.keys(PLATFORM_POLICY.scopeAliases),
      ...PLATFORM_POLICY.excludedRoutePaths.filter((path) => path !== "/"),
      "/memories",
      "/sessions",
      "/databases",
    ];
    for (const dir of ["token", "rbac"]) {
      const root = new URL(`../src/${dir}/`, import.meta.url);
      // Every folder below too (token/read, token/verify, token/keys, ...).
      for (const file of readdirSync(root, { recursive: true, encoding: "utf8" }).filter(
        (name) => name.endsWith(".ts") && !name.endsWith(".test.ts"),
      )) {
        const text = readFileSync(new URL(file, root), "utf8");
        for (const name of names) expect(text.includes(name), `${dir}/${file} names "${name}"`).toBe(false);
      }
    }
  });
});
