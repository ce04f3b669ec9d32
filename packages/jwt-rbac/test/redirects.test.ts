import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordingLogger } from "../../common/test/recording-logger.js";
import { createJwtAuthOn } from "../src/auth.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import type { Runtime } from "../src/token/verify/signature-types.js";
import { type ProviderKey, providerKey } from "./fixtures/oidc-provider.js";

// The configured JWKS (or issuer) URL is the trust anchor: a redirect may move the document within its origin
// (scheme, host and port), once, and never anywhere else. Two real servers on 127.0.0.1 are two origins;
// `localhost` on the same port is a third.

interface Origin {
  readonly url: string;
  readonly port: number;
  /** Requests per path. */
  readonly hits: Map<string, number>;
  server: Server;
}

let key: ProviderKey;
let a: Origin;
let b: Origin;

/** Redirects of origin A, by path: where each one points. */
function redirectsOfA(): Record<string, string> {
  return {
    "/same": "/jwks",
    "/same-absolute": `${a.url}/jwks`,
    "/same-307": "/jwks",
    "/twice": "/same",
    "/loop": "/loop",
    "/cross-port": `${b.url}/jwks`,
    "/cross-host": `http://localhost:${a.port}/jwks`,
    "/cross-scheme": `https://127.0.0.1:${a.port}/jwks`,
    "/cross-metadata": "http://169.254.169.254/latest/jwks",
    "/moved/.well-known/openid-configuration": "/moved/.well-known/openid-configuration?v=2",
    "/cross/.well-known/openid-configuration": `${b.url}/cross/.well-known/openid-configuration`,
  };
}

function startOrigin(redirects: () => Record<string, string>): Promise<Origin> {
  const hits = new Map<string, number>();
  const origin = { hits } as Origin;
  origin.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const location = url.search === "" ? redirects()[path] : undefined;
    if (location !== undefined) {
      res.writeHead(path === "/same-307" ? 307 : 302, { location }).end();
    } else if (path === "/jwks") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: [key.publicJwk] }));
    } else if (path.endsWith("/.well-known/openid-configuration")) {
      // The issuer as configured at A, whichever origin serves it: only the redirect rule can refuse it.
      const issuer = `${a.url}${path.slice(0, -"/.well-known/openid-configuration".length)}`;
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer, jwks_uri: `${origin.url}/jwks` }));
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    origin.server.listen(0, "127.0.0.1", () => {
      const { port } = origin.server.address() as AddressInfo;
      Object.assign(origin, { port, url: `http://127.0.0.1:${port}` });
      resolve(origin);
    }),
  );
}

beforeAll(async () => {
  key = await providerKey();
  a = await startOrigin(redirectsOfA);
  b = await startOrigin(() => ({}));
});
afterAll(async () => {
  for (const origin of [a, b]) {
    origin.server.closeAllConnections();
    await new Promise((resolve) => origin.server.close(resolve));
  }
});

const RUNTIMES: readonly [string, Runtime][] = [
  ["webcrypto (jose)", webRuntime],
  ["node:crypto", nodeRuntime],
];

describe.each(RUNTIMES)("remote fetch redirects, %s", (_name, runtime) => {
  async function check(options: JwtRbacOptions, iss?: string) {
    const { warnings, logger } = recordingLogger();
    const auth = createJwtAuthOn(runtime, { ...options, logger });
    const jwt = new SignJWT({ sub: "u1", ...(iss === undefined ? {} : { iss }) })
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuedAt()
      .setExpirationTime("5m");
    const result = await auth.authenticate({
      method: "GET",
      path: "/x",
      headers: { authorization: `Bearer ${await jwt.sign(key.privateKey)}` },
    });
    return { outcome: result.ok ? "ok" : result.error.reason, warnings: warnings.join("\n") };
  }
  const jwksAt = (path: string) => check({ jwksUrl: `${a.url}${path}` });

  it("follows one same-origin redirect (302 relative or absolute, 307)", async () => {
    for (const path of ["/same", "/same-absolute", "/same-307"]) {
      expect((await jwksAt(path)).outcome, path).toBe("ok");
    }
  });

  it("refuses a second redirect, even within the origin, and a loop", async () => {
    for (const path of ["/twice", "/loop"]) {
      const { outcome, warnings } = await jwksAt(path);
      expect(outcome, path).toBe("key_unavailable");
      expect(warnings, path).toMatch(/redirect refused/);
    }
  });

  it("refuses a redirect to another port, host or scheme, and never contacts it", async () => {
    const before = b.hits.get("/jwks") ?? 0;
    for (const path of ["/cross-port", "/cross-host", "/cross-scheme", "/cross-metadata"]) {
      const { outcome, warnings } = await jwksAt(path);
      expect(outcome, path).toBe("key_unavailable");
      expect(warnings, path).toMatch(new RegExp(`${path}: redirect refused`));
    }
    expect(b.hits.get("/jwks") ?? 0).toBe(before);
  });

  it("applies the same rule to the discovery document", async () => {
    const moved = `${a.url}/moved`;
    expect((await check({ issuer: moved, discovery: true }, moved)).outcome).toBe("ok");
    const cross = `${a.url}/cross`;
    const before = b.hits.get("/cross/.well-known/openid-configuration") ?? 0;
    const refused = await check({ issuer: cross, discovery: true }, cross);
    expect(refused.outcome).toBe("key_unavailable");
    expect(refused.warnings).toMatch(/redirect refused/);
    expect(b.hits.get("/cross/.well-known/openid-configuration") ?? 0).toBe(before);
  });
});
