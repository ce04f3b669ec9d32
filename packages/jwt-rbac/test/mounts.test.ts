import express, { Router } from "express";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwtRbac as expressJwtRbac } from "../src/express/index.js";
import { withJwtRbac } from "../src/fetch/index.js";
import { jwtRbac as honoJwtRbac } from "../src/hono/index.js";
import { ConfigError, type JwtRbacOptions } from "../src/index.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";
import { listenExpress, serveFetchApp, type TestServer } from "./fixtures/servers.js";

// Each adapter matches the mappings on the path below where its app is mounted, as the app's own
// routes are: a table written for the app works wherever the app is mounted, and a mounted app cannot
// be reached around its mappings.

let keys: TestKeys;
const options = (): JwtRbacOptions => ({
  algorithm: "HS256",
  verificationKeys: [keys.hsSecret],
  authorization: true,
});
const token = (scopes: string[]) => sign({ sub: "u1", scopes }, "HS256", keys.hsSecret);

interface Mounted {
  readonly name: string;
  /** The prefix the app's routes are reached under. */
  readonly prefix: string;
  start(handled: string[]): Promise<TestServer>;
}

/** A Hono app with the middleware and the migrate route, as an app author writes it. */
async function honoApp(app: Hono, handled: string[]) {
  const middleware = honoJwtRbac(options());
  await middleware.auth.ready;
  app.use(middleware);
  app.post("/databases/:id/migrate", (c) => {
    handled.push(c.req.param("id"));
    return c.json({ migrated: c.req.param("id") });
  });
  app.get("/health", (c) => c.json({ ok: true }));
  return app;
}

async function expressRouter(handled: string[]) {
  const middleware = expressJwtRbac(options());
  await middleware.auth.ready;
  const router = Router();
  router.use(middleware);
  router.post("/databases/:id/migrate", (req, res) => {
    handled.push(req.params.id as string);
    res.json({ migrated: req.params.id });
  });
  router.get("/health", (_req, res) => {
    res.json({ ok: true });
  });
  return router;
}

const MOUNTS: readonly Mounted[] = [
  {
    name: "Hono at the root",
    prefix: "",
    start: async (handled) => serveFetchApp((await honoApp(new Hono(), handled)).fetch),
  },
  {
    name: "Hono sub-app under app.route('/api')",
    prefix: "/api",
    start: async (handled) => {
      const root = new Hono();
      root.route("/api", await honoApp(new Hono(), handled));
      return serveFetchApp(root.fetch);
    },
  },
  {
    name: "Hono sub-app under app.route('/t/:tenant')",
    prefix: "/t/acme",
    start: async (handled) => {
      const root = new Hono();
      root.route("/t/:tenant", await honoApp(new Hono(), handled));
      return serveFetchApp(root.fetch);
    },
  },
  {
    name: "Hono basePath('/v1')",
    prefix: "/v1",
    start: async (handled) => serveFetchApp((await honoApp(new Hono().basePath("/v1"), handled)).fetch),
  },
  {
    name: "Express at the root",
    prefix: "",
    start: async (handled) => {
      const app = express();
      app.use(await expressRouter(handled));
      return listenExpress(app);
    },
  },
  {
    name: "Express router under app.use('/api')",
    prefix: "/api",
    start: async (handled) => {
      const app = express();
      app.use("/api", await expressRouter(handled));
      return listenExpress(app);
    },
  },
  {
    name: "Fetch with basePath '/api'",
    prefix: "/api",
    start: async (handled) => {
      const handler = withJwtRbac(
        (request) => {
          const match = /^\/api\/databases\/([^/]+)\/migrate$/.exec(new URL(request.url).pathname);
          if (match === null || request.method !== "POST") return new Response(null, { status: 404 });
          handled.push(match[1] as string);
          return Response.json({ migrated: match[1] });
        },
        { ...options(), basePath: "/api" },
      );
      await handler.auth.ready;
      return serveFetchApp(handler);
    },
  },
];

beforeAll(async () => {
  keys = await testKeys();
});

describe.each(MOUNTS)("$name", ({ prefix, start }) => {
  const handled: string[] = [];
  let server: TestServer;
  beforeAll(async () => {
    server = await start(handled);
  });
  afterAll(() => server.close());

  const post = async (path: string, scopes: string[]) =>
    fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${await token(scopes)}` },
    });

  it("applies the app's mapping below the mount point", async () => {
    const refused = await post(`${prefix}/databases/default/migrate`, ["agents:read"]);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      detail: "Insufficient permissions. Required scope(s): config:write",
      error_code: "FORBIDDEN",
    });
    expect(handled).toEqual([]);
    const allowed = await post(`${prefix}/databases/default/migrate`, ["config:write"]);
    expect(allowed.status).toBe(200);
    expect(handled).toEqual(["default"]);
    handled.length = 0;
  });

  it("excludes the app's public paths below the mount point", async () => {
    const response = await fetch(`${server.url}${prefix}/health`);
    // The Fetch test handler routes only the migrate route: excluded means "not refused" there.
    expect(response.status).not.toBe(401);
  });
});

describe("Fetch basePath", () => {
  it("refuses a request outside basePath, and a basePath that is no path", async () => {
    const handled: Request[] = [];
    const handler = withJwtRbac(
      (request) => {
        handled.push(request);
        return new Response("ok");
      },
      { ...options(), basePath: "/api/" },
    );
    const response = await handler(
      new Request("http://app.test/apix/databases/d/migrate", { method: "POST" }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      detail: "Invalid request path: outside the mount point /api",
      error_code: "BAD_REQUEST",
    });
    expect(handled).toEqual([]);
    expect(() => withJwtRbac(() => new Response(), { ...options(), basePath: "/a/../b" })).toThrow(
      ConfigError,
    );
  });
});
