import { serve } from "@hono/node-server";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BEARER_SCHEME,
  capEcho,
  ErrorBody,
  jsonResponse,
  MAX_ECHO_CHARS,
  validationHook,
} from "../src/hono/index.js";

describe("capEcho", () => {
  it("returns short input whole", () => {
    expect(capEcho("2.5.6")).toBe("2.5.6");
    expect(capEcho("x".repeat(MAX_ECHO_CHARS))).toBe("x".repeat(MAX_ECHO_CHARS));
  });

  it("cuts long input to MAX_ECHO_CHARS code points and marks the cut", () => {
    expect(capEcho("9".repeat(3000))).toBe(`${"9".repeat(MAX_ECHO_CHARS)}…`);
  });

  it("counts code points, so an emoji is never cut in half", () => {
    const emoji = "😀".repeat(MAX_ECHO_CHARS);
    expect(capEcho(emoji)).toBe(emoji);
    expect(capEcho(`${emoji}😀`)).toBe(`${emoji}…`);
  });
});

// A real app on a real socket, as a user mounts it: the hook as defaultHook of an OpenAPIHono.
describe("validationHook", () => {
  let base = "";
  let close: () => void = () => {};

  beforeAll(async () => {
    const app = new OpenAPIHono({ defaultHook: validationHook });
    app.openAPIRegistry.registerComponent("securitySchemes", BEARER_SCHEME, {
      type: "http",
      scheme: "bearer",
    });
    app.openapi(
      createRoute({
        method: "get",
        path: "/items",
        security: [{ [BEARER_SCHEME]: [] }],
        request: { query: z.strictObject({ limit: z.coerce.number().int().max(10) }) },
        responses: {
          200: jsonResponse(z.object({ ok: z.boolean() }), "ok"),
          422: jsonResponse(ErrorBody, "bad"),
        },
      }),
      (c) => c.json({ ok: true }, 200),
    );
    app.doc("/openapi.json", { openapi: "3.1.0", info: { title: "t", version: "1" } });
    await new Promise<void>((resolve) => {
      const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => {
        base = `http://127.0.0.1:${info.port}`;
        resolve();
      });
      close = () => server.close();
    });
  });
  afterAll(() => close());

  it("lets valid input through", async () => {
    const response = await fetch(`${base}/items?limit=3`);
    expect(response.status).toBe(200);
  });

  it("answers 422 VALIDATION_ERROR in the one error body, naming the bad parameter", async () => {
    const response = await fetch(`${base}/items?limit=11`);
    expect(response.status).toBe(422);
    const body = await response.json();
    expect(ErrorBody.parse(body)).toEqual(body);
    expect(body).toEqual({ detail: expect.stringMatching(/^limit: /), error_code: "VALIDATION_ERROR" });
  });

  it("caps every echoed name and the number of issues", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `${i}${"n".repeat(500)}`);
    const response = await fetch(`${base}/items?limit=1&${names.map((name) => `${name}=1`).join("&")}`);
    expect(response.status).toBe(422);
    const { detail } = (await response.json()) as { detail: string };
    expect(detail).toMatch(/^unknown query parameters /);
    expect(detail).toContain(" and 3 more");
    expect(detail).not.toContain("n".repeat(MAX_ECHO_CHARS + 1));
    expect(detail.length).toBeLessThan(600);
  });

  it("describes the bearer scheme under BEARER_SCHEME in the OpenAPI document", async () => {
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
      components: { securitySchemes: Record<string, unknown> };
      paths: Record<string, { get: { security: unknown } }>;
    };
    expect(Object.keys(document.components.securitySchemes)).toEqual(["HTTPBearer"]);
    expect(document.paths["/items"]?.get.security).toEqual([{ HTTPBearer: [] }]);
  });
});
