import type { AddressInfo } from "node:net";
import { jwtRbac } from "@agent-platform/jwt-rbac/hono";
import { serve } from "@hono/node-server";
import { OpenAPIHono } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app.js";
import { createLogger } from "../src/http/logging.js";
import { publicKeyPem, request, signToken } from "./helpers.js";

describe("an unhandled exception in a route", () => {
  let url: string;
  let close: () => Promise<void>;
  const logs: string[] = [];
  beforeAll(async () => {
    const failing = new OpenAPIHono();
    failing.get("/explode", () => {
      throw new Error("database password is hunter2");
    });
    const app = createApp({
      databases: [],
      knownVersions: [],
      auth: jwtRbac({ verificationKeys: [await publicKeyPem()], algorithm: "ES256" }),
      logger: createLogger("info", { write: (line: string) => void logs.push(line) }),
      routes: [failing],
      serverUrl: () => url,
    });
    const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close?.();
  });

  it("answers 500 with the error body, no message and no stack; the log has the error", async () => {
    const result = await request({ url }, "GET", "/explode", await signToken([]));
    expect(result.status).toBe(500);
    expect(result.body).toEqual({ detail: "Internal server error", error_code: "INTERNAL_SERVER_ERROR" });
    expect(result.text).not.toContain("hunter2");
    expect(logs.join("")).toContain("unhandled error");
  });
});
