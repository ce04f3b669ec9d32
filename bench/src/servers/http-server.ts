/**
 * One HTTP variant per process: `node --import tsx http-server.ts <variant>`, keys in BENCH_KEYS (JSON).
 * Prints `LISTENING <port>` once ready (port 0: the OS picks), or `UNAVAILABLE <why>` when a package under test
 * is not built yet. Every variant serves the same route, GET /bench -> 200 {"ok":true}.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import express, { type ErrorRequestHandler, type RequestHandler } from "express";
import { expressjwt, type Request as JwtRequest } from "express-jwt";
import { Hono, type MiddlewareHandler } from "hono";
import { jwt } from "hono/jwt";
import { importSPKI } from "jose";
import { createMinimalVerifier } from "../floor.js";
import { importKeys, type KeyExport, SCOPE } from "../keys.js";
import { BENCH_PATH, isUnavailable, loadExport, oursOptions } from "../ours.js";

export const HTTP_VARIANTS = [
  "hono-bare",
  "hono-noop",
  "hono-header",
  "hono-ours",
  "hono-minimal",
  "hono-jwt",
  "express-bare",
  "express-ours",
  "express-jwt",
] as const;
export type HttpVariant = (typeof HTTP_VARIANTS)[number];

const variant = process.argv[2] as HttpVariant;
const keys = importKeys(JSON.parse(process.env.BENCH_KEYS ?? "{}") as KeyExport);
const forbidden = { detail: "Insufficient permissions", error_code: "FORBIDDEN" };
const unauthenticated = { detail: "Unauthorized", error_code: "UNAUTHENTICATED" };

function unavailable(why: string): never {
  console.log(`UNAVAILABLE ${why}`);
  process.exit(0);
}

async function honoMiddleware(): Promise<MiddlewareHandler[]> {
  switch (variant) {
    case "hono-ours": {
      const jwtRbac = await loadExport<(o: unknown) => MiddlewareHandler>(
        "@agent-platform/jwt-rbac/hono",
        "jwtRbac",
      );
      if (isUnavailable(jwtRbac)) unavailable(jwtRbac.unavailable);
      return [jwtRbac(oursOptions(keys, { authorization: true }))];
    }
    // Two reference points for what any Hono middleware costs on @hono/node-server: the async hop itself, and
    // reading one request header (which makes the lightweight request build a WHATWG Headers object).
    case "hono-noop":
      return [
        async (_c, next) => {
          await next();
        },
      ];
    case "hono-header":
      return [
        async (c, next) => {
          if (c.req.header("authorization") === undefined) return c.json(unauthenticated, 401);
          await next();
        },
      ];
    case "hono-minimal": {
      const verify = createMinimalVerifier(keys.alg, keys.verifyKey, SCOPE);
      return [
        async (c, next) => {
          if (!verify(c.req.header("authorization"))) return c.json(unauthenticated, 401);
          await next();
        },
      ];
    }
    case "hono-jwt": {
      // HS256 with the secret string; asymmetric with a CryptoKey imported once (hono re-imports a string per call).
      const secret =
        keys.alg === "HS256" ? keys.verificationText : await importSPKI(keys.verificationText, keys.alg);
      return [
        jwt({ secret, alg: keys.alg }),
        async (c, next) => {
          const payload = c.get("jwtPayload") as { scopes?: unknown };
          if (!Array.isArray(payload.scopes) || !payload.scopes.includes(SCOPE))
            return c.json(forbidden, 403);
          await next();
        },
      ];
    }
    default:
      return [];
  }
}

async function expressMiddleware(): Promise<RequestHandler[]> {
  switch (variant) {
    case "express-ours": {
      const jwtRbac = await loadExport<(o: unknown) => RequestHandler>(
        "@agent-platform/jwt-rbac/express",
        "jwtRbac",
      );
      if (isUnavailable(jwtRbac)) unavailable(jwtRbac.unavailable);
      return [jwtRbac(oursOptions(keys, { authorization: true }))];
    }
    case "express-jwt": {
      // What express-jwt users write: its middleware (jsonwebtoken.verify underneath, given a KeyObject made once)
      // plus a hand-written scope check.
      const scopeCheck: RequestHandler = (req, res, next) => {
        const scopes = (req as JwtRequest<{ scopes?: unknown }>).auth?.scopes;
        if (!Array.isArray(scopes) || !scopes.includes(SCOPE)) {
          res.status(403).json(forbidden);
          return;
        }
        next();
      };
      return [
        expressjwt({ secret: keys.verifyKey, algorithms: [keys.alg as "HS256" | "RS256"] }),
        scopeCheck,
      ];
    }
    default:
      return [];
  }
}

function listening(port: number): void {
  console.log(`LISTENING ${port}`);
}

if (variant.startsWith("hono-")) {
  const app = new Hono();
  for (const middleware of await honoMiddleware()) app.use(middleware);
  app.get(BENCH_PATH, (c) => c.json({ ok: true }));
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => listening(info.port));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
} else if (variant.startsWith("express-")) {
  const app = express();
  // Mounted without a path, as users do: a path mount would hide the route from the middleware (req.path "/").
  for (const middleware of await expressMiddleware()) app.use(middleware);
  app.get(BENCH_PATH, (_req, res) => {
    res.json({ ok: true });
  });
  const onError: ErrorRequestHandler = (error: { status?: number }, _req, res, _next) => {
    res.status(error.status ?? 500).json(unauthenticated);
  };
  app.use(onError);
  const server = app.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port));
  process.on("SIGTERM", () => server.close(() => process.exit(0)));
} else {
  unavailable(`unknown variant ${variant}`);
}
