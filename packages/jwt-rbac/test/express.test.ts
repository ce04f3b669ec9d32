import type { AddressInfo } from "node:net";
import cors from "cors";
import express, { type NextFunction, type Request, type Response } from "express";
import express4 from "express4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jwtRbac } from "../src/express/index.js";
import { isAuthError } from "../src/index.js";
import { sign, type TestKeys, testKeys } from "./fixtures/keys.js";

let keys: TestKeys;
beforeAll(async () => {
  keys = await testKeys();
});

async function listen(app: ReturnType<typeof express>) {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each([
  ["Express 5", express],
  ["Express 4", express4 as unknown as typeof express],
])("%s specifics", (_name, createApp) => {
  let url: string;
  let close: () => void;

  beforeAll(async () => {
    const middleware = jwtRbac({
      algorithm: "HS256",
      verificationKeys: [keys.hsSecret],
      authorization: true,
      passError: true,
    });
    await middleware.auth.ready;
    const app = createApp();
    app.use(express.json());
    app.use("/api", middleware);
    app.get("/api/agents/:id", (req: Request, res: Response) => {
      res.json({ user: req.auth?.userId ?? null, id: req.params.id });
    });
    // The app's own error handler receives the AuthError.
    app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
      if (isAuthError(error)) {
        res.status(error.status).json({ mine: true, code: error.code, reason: error.reason });
        return;
      }
      res.status(500).json({ mine: true });
    });
    const started = await listen(app);
    url = started.url;
    close = () => started.server.close();
  });
  afterAll(() => close());

  it("sets req.auth, with paths relative to the mount point", async () => {
    const token = await sign({ sub: "u1", scopes: ["agents:a1:read"] }, "HS256", keys.hsSecret);
    const response = await fetch(`${url}/api/agents/a1`, { headers: { authorization: `Bearer ${token}` } });
    expect(await response.json()).toEqual({ user: "u1", id: "a1" });
  });

  it("passes the AuthError to next(err) with passError", async () => {
    const response = await fetch(`${url}/api/agents/a1`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ mine: true, code: "UNAUTHENTICATED", reason: "token_missing" });
    const token = await sign({ sub: "u1", scopes: ["agents:a2:read"] }, "HS256", keys.hsSecret);
    const forbidden = await fetch(`${url}/api/agents/a1`, { headers: { authorization: `Bearer ${token}` } });
    expect(await forbidden.json()).toEqual({ mine: true, code: "FORBIDDEN", reason: "insufficient_scope" });
  });

  it("matches case-insensitively like Express routers, so /AGENTS cannot skip the mapping", async () => {
    const token = await sign({ sub: "u1", scopes: ["agents:a2:read"] }, "HS256", keys.hsSecret);
    const response = await fetch(`${url}/api/AGENTS/a1`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(403);
  });
});

// The Express README's recipe for a browser UI on another origin: the `cors` package before jwtRbac.
describe.each([
  ["Express 5", express],
  ["Express 4", express4 as unknown as typeof express],
])("%s with the cors package, as the README shows", (_name, createApp) => {
  const UI = "https://ui.example.com";
  let url: string;
  let close: () => void;
  const handled: string[] = [];

  beforeAll(async () => {
    const app = createApp();
    app.use(
      cors({
        origin: [UI], // exact origins; never `true` or "*" with cookies
        allowedHeaders: ["Authorization", "Content-Type"],
        exposedHeaders: ["WWW-Authenticate"],
        maxAge: 600,
      }),
    );
    app.use(jwtRbac({ algorithm: "HS256", verificationKeys: [keys.hsSecret], authorization: true }));
    app.all("/agents/:id/runs", (req: Request, res: Response) => {
      handled.push(req.method);
      res.json({ ok: true });
    });
    const started = await listen(app);
    url = started.url;
    close = () => started.server.close();
  });
  afterAll(() => close());

  const preflight = (origin: string) =>
    fetch(`${url}/agents/a1/runs`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization",
      },
    });

  it("answers an allowed preflight before authentication, and no handler runs", async () => {
    const answer = await preflight(UI);
    expect(answer.status).toBe(204);
    expect(answer.headers.get("access-control-allow-origin")).toBe(UI);
    expect(answer.headers.get("access-control-allow-headers")).toBe("Authorization,Content-Type");
    expect(answer.headers.get("access-control-max-age")).toBe("600");
    expect(answer.headers.get("vary")).toMatch(/Origin/);
    const refused = await preflight("https://evil.example");
    expect(refused.headers.get("access-control-allow-origin")).toBeNull();
    expect(handled).toEqual([]);
  });

  it("lets the page read a 401 for an expired token, and a 403, with the challenge", async () => {
    const expired = await sign({ sub: "u", scopes: ["agents:run"], exp: 1 }, "HS256", keys.hsSecret);
    const readOnly = await sign({ sub: "u", scopes: ["agents:read"] }, "HS256", keys.hsSecret);
    for (const [token, status] of [
      [expired, 401],
      [readOnly, 403],
    ] as const) {
      const answer = await fetch(`${url}/agents/a1/runs`, {
        method: "POST",
        headers: { origin: UI, authorization: `Bearer ${token}` },
      });
      expect(answer.status).toBe(status);
      expect(answer.headers.get("access-control-allow-origin")).toBe(UI);
      expect(answer.headers.get("access-control-expose-headers")).toBe("WWW-Authenticate");
      expect(answer.headers.get("vary")).toMatch(/Origin/);
      const other = await fetch(`${url}/agents/a1/runs`, {
        method: "POST",
        headers: { origin: "https://evil.example", authorization: `Bearer ${token}` },
      });
      expect(other.status).toBe(status);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    }
    expect(handled).toEqual([]);
  });
});
