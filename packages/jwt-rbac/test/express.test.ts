import type { AddressInfo } from "node:net";
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
