import express, { type Express, Router } from "express";
import express4 from "express4";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJwtAuthOn } from "../src/auth.js";
import { jwtRbac as expressJwtRbac } from "../src/express/index.js";
import { withJwtRbac } from "../src/fetch/index.js";
import { jwtRbac as honoJwtRbac } from "../src/hono/index.js";
import type { JwtRbacOptions } from "../src/index.js";
import { runtime as nodeRuntime } from "../src/node/runtime.js";
import { runtime as webRuntime } from "../src/runtime.js";
import { spellings } from "./fixtures/encodings.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { rawRequest } from "./fixtures/raw-http.js";
import { listenExpress, serveFetchApp, type TestServer } from "./fixtures/servers.js";

// The hostile review's attack, over raw sockets so that nothing normalises the request line: a token
// with only agents:read against every protected route of the example apps (the reference server's and
// the Express app's), each spelled many ways, through every adapter and mount. Every answer must be a
// refusal (400/401/403) or "not routed" (404), and no handler may run.

/** Protected routes of the example apps, none of which agents:read may call. */
const ROUTES = [
  { method: "POST", pattern: "/databases/:id/migrate", path: "/databases/default/migrate" },
  { method: "POST", pattern: "/databases/all/migrate", path: "/databases/all/migrate" },
  { method: "GET", pattern: "/databases/:id/migrations", path: "/databases/default/migrations" },
  { method: "GET", pattern: "/whatsapp/inbox", path: "/whatsapp/inbox" },
  { method: "POST", pattern: "/agents", path: "/agents" },
  { method: "DELETE", pattern: "/agents/:id", path: "/agents/a1" },
  { method: "POST", pattern: "/agents/:id/runs", path: "/agents/a1/runs" },
] as const;

let keys: TestKeys;
const options = (): JwtRbacOptions => ({
  algorithm: "HS256",
  verificationKeys: [keys.hsSecret],
  authorization: true,
  scopeMappings: { "GET /whatsapp/inbox": ["config:read"] },
});

/** Handler invocations, per mount: any one of them under the low-scope token is a bypass. */
type Counter = { calls: number };

function honoRoutes(app: Hono, counter: Counter): Hono {
  for (const route of ROUTES) {
    app.on(route.method, route.pattern, (c) => {
      counter.calls++;
      return c.json({ handled: true });
    });
  }
  return app;
}

async function honoWithMiddleware(app: Hono, counter: Counter): Promise<Hono> {
  const middleware = honoJwtRbac(options());
  await middleware.auth.ready;
  app.use(middleware);
  return honoRoutes(app, counter);
}

function expressRoutes<T extends Express | Router>(app: T, counter: Counter): T {
  for (const route of ROUTES) {
    const method = route.method.toLowerCase() as "get" | "post" | "delete";
    // Express and Router share IRouter's route methods; the union of the two does not type-check as one.
    (app as Router)[method](route.pattern, (_req, res) => {
      counter.calls++;
      res.json({ handled: true });
    });
  }
  return app;
}

async function expressMiddleware() {
  const middleware = expressJwtRbac(options());
  await middleware.auth.ready;
  return middleware;
}

/** A router in front of which the Fetch adapter sits, that decodes everything, `%2F` included. */
function decodingRouter(counter: Counter) {
  return (request: Request): Response => {
    let path: string;
    try {
      path = decodeURIComponent(new URL(request.url).pathname);
    } catch {
      return new Response(null, { status: 400 });
    }
    for (const route of ROUTES) {
      const pattern = new RegExp(`^${route.pattern.replace(/:\w+/g, "[^/]+")}/?$`);
      if (route.method === request.method && pattern.test(path)) {
        counter.calls++;
        return Response.json({ handled: true });
      }
    }
    return new Response(null, { status: 404 });
  };
}

async function fetchIn(
  front: (request: Request) => Response | Promise<Response>,
  runtime: typeof nodeRuntime,
) {
  const auth = createJwtAuthOn(runtime, options());
  await auth.ready;
  return serveFetchApp(withJwtRbac((request) => front(request), auth));
}

interface Mount {
  readonly name: string;
  readonly prefix: string;
  start(counter: Counter): Promise<TestServer>;
}

const MOUNTS: readonly Mount[] = [
  {
    name: "Hono, root",
    prefix: "",
    start: async (counter) => serveFetchApp((await honoWithMiddleware(new Hono(), counter)).fetch),
  },
  {
    name: "Hono, sub-app under app.route('/api')",
    prefix: "/api",
    start: async (counter) => {
      const root = new Hono();
      root.route("/api", await honoWithMiddleware(new Hono(), counter));
      return serveFetchApp(root.fetch);
    },
  },
  {
    name: "Hono, basePath('/v1')",
    prefix: "/v1",
    start: async (counter) =>
      serveFetchApp((await honoWithMiddleware(new Hono().basePath("/v1"), counter)).fetch),
  },
  {
    name: "Express 5, root",
    prefix: "",
    start: async (counter) => {
      const app = express();
      app.use(await expressMiddleware());
      return listenExpress(expressRoutes(app, counter));
    },
  },
  {
    name: "Express 4, root",
    prefix: "",
    start: async (counter) => {
      const app = (express4 as unknown as typeof express)();
      app.use(await expressMiddleware());
      return listenExpress(expressRoutes(app, counter));
    },
  },
  {
    name: "Express 5, router under app.use('/api')",
    prefix: "/api",
    start: async (counter) => {
      const router = Router();
      router.use(await expressMiddleware());
      const app = express();
      app.use("/api", expressRoutes(router, counter));
      return listenExpress(app);
    },
  },
  {
    name: "Fetch (node:crypto build) in front of a Hono app",
    prefix: "",
    start: (counter) => fetchIn(honoRoutes(new Hono(), counter).fetch, nodeRuntime),
  },
  {
    name: "Fetch (WebCrypto build) in front of a Hono app",
    prefix: "",
    start: (counter) => fetchIn(honoRoutes(new Hono(), counter).fetch, webRuntime),
  },
  {
    name: "Fetch (node:crypto build) in front of a router that decodes %2F",
    prefix: "",
    start: (counter) => fetchIn(decodingRouter(counter), nodeRuntime),
  },
  {
    name: "Fetch (WebCrypto build) in front of a router that decodes %2F",
    prefix: "",
    start: (counter) => fetchIn(decodingRouter(counter), webRuntime),
  },
];

/** One request over a raw socket, exactly as written; the status code of the answer. */
async function rawStatus(url: string, method: string, target: string, token: string): Promise<number> {
  const answer = await rawRequest(url, method, target, [`Authorization: Bearer ${token}`]);
  if (answer.status === 0)
    throw new Error(`no status line for ${method} ${target}: ${JSON.stringify(answer.head)}`);
  return answer.status;
}

async function inBatches<T, R>(
  items: readonly T[],
  size: number,
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}

beforeAll(async () => {
  keys = await testKeys();
});

describe.each(MOUNTS)("$name", ({ prefix, start }) => {
  const counter: Counter = { calls: 0 };
  let server: TestServer;
  let lowScope: string;
  beforeAll(async () => {
    server = await start(counter);
    lowScope = await sign({ sub: "attacker", scopes: ["agents:read"] }, "HS256", keys.hsSecret);
  });
  afterAll(() => server.close());

  it("routes every protected route for the admin (the handler counter works)", async () => {
    const admin = await sign({ sub: "admin", scopes: ["platform:admin"] }, "HS256", keys.hsSecret);
    for (const route of ROUTES) {
      expect(await rawStatus(server.url, route.method, `${prefix}${route.path}`, admin), route.path).toBe(
        200,
      );
    }
    expect(counter.calls).toBe(ROUTES.length);
    counter.calls = 0;
  });

  it.each(ROUTES)("$method $path: at least 50 spellings, each refused or not routed", async (route) => {
    const variants = spellings(route.method, `${prefix}${route.path}`);
    expect(variants.length).toBeGreaterThanOrEqual(50);
    const answers = await inBatches(variants, 16, async ({ method, target }) => ({
      request: `${method} ${target}`,
      status: await rawStatus(server.url, method, target, lowScope),
    }));
    const through = answers.filter(({ status }) => ![400, 401, 403, 404].includes(status));
    expect(through).toEqual([]);
    expect(counter.calls).toBe(0);
  });
});
