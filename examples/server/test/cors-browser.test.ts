import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from "./browser.js";
import { signToken, startTestServer, type TestServer } from "./helpers.js";

const available = ensureChromium();
if (!available.ok) console.warn(`SKIPPED: the CORS browser tests: ${available.reason}`);

/** A browser UI's own origin: a second server on another 127.0.0.1 port, serving an empty page. */
async function startPageServer(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end("<!doctype html><title>ui</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Read {
  status?: number;
  body?: unknown;
  challenge?: string | null;
  failed?: string;
}

// Real Chromium, real origins: what the control-plane UI meets when it calls the API from its own site.
describe.skipIf(!available.ok)("a browser UI on another origin", { timeout: 120_000 }, () => {
  let api: TestServer;
  let ui: Awaited<ReturnType<typeof startPageServer>>;
  let other: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  beforeAll(async () => {
    [ui, other] = await Promise.all([startPageServer(), startPageServer()]);
    api = await startTestServer({ env: { CORS_ALLOWED_ORIGINS: ui.origin } });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.cleanup();
    for (const page of [ui, other]) await new Promise((resolve) => page?.server.close(resolve));
  });

  /** Loads the page at `origin` and has it call the API with `fetch`, as a UI's script does. */
  async function callFrom(origin: string, path: string, method: string, token: string): Promise<Read> {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(
        async ({ url, method, token }) => {
          try {
            const response = await fetch(url, { method, headers: { authorization: `Bearer ${token}` } });
            return {
              status: response.status,
              body: await response.json(),
              challenge: response.headers.get("www-authenticate"),
            };
          } catch (error) {
            return { failed: String(error) };
          }
        },
        { url: `${api.url}${path}`, method, token },
      );
    } finally {
      await page.close();
    }
  }

  it("an allowed page reads the 401 of an expired token, body and challenge, so it can refresh", async () => {
    const expired = await signToken(["platform:admin"], { expiresAt: Math.floor(Date.now() / 1000) - 3600 });
    const read = await callFrom(ui.origin, "/databases/default/migrations", "GET", expired);
    expect(read).toEqual({
      status: 401,
      body: { detail: "Token has expired", error_code: "UNAUTHENTICATED" },
      challenge: 'Bearer realm="platform", error="invalid_token", error_description="Token has expired"',
    });
  });

  it("an allowed page's POST passes its preflight and reads a 403 and a 200", async () => {
    const reader = await callFrom(
      ui.origin,
      "/databases/default/migrate",
      "POST",
      await signToken(["config:read"]),
    );
    expect(reader).toMatchObject({ status: 403, body: { error_code: "FORBIDDEN" } });
    const admin = await callFrom(
      ui.origin,
      "/databases/default/migrate",
      "POST",
      await signToken(["platform:admin"]),
    );
    expect(admin).toMatchObject({ status: 200 });
  });

  it("a page on an origin not listed can read nothing, not even an error", async () => {
    const expired = await signToken(["platform:admin"], { expiresAt: Math.floor(Date.now() / 1000) - 3600 });
    expect(await callFrom(other.origin, "/databases/default/migrations", "GET", expired)).toEqual({
      failed: "TypeError: Failed to fetch",
    });
    expect(
      await callFrom(other.origin, "/databases/default/migrate", "POST", await signToken(["platform:admin"])),
    ).toEqual({ failed: "TypeError: Failed to fetch" });
  });
});
