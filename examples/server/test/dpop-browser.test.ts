import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { calculateJwkThumbprint, type JWK } from "jose";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from "./browser.js";
import { signToken, startTestServer, type TestServer } from "./helpers.js";

const available = ensureChromium();
if (!available.ok) console.warn(`SKIPPED: the DPoP browser test: ${available.reason}`);

/** The UI's own origin: another 127.0.0.1 port, serving an empty page. */
async function startPageServer(): Promise<{ origin: string; server: Server }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end("<!doctype html><title>ui</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

interface Exchange {
  status: number;
  nonce: string | null;
  challenge: string | null;
}

/** In the page: a non-extractable ES256 key made with WebCrypto, kept on the page's global; its public JWK. */
function makeKey(page: Page): Promise<JWK> {
  return page.evaluate(async () => {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ]);
    (globalThis as unknown as { dpopKey: typeof pair }).dpopKey = pair;
    const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
    return { kty, crv, x, y } as JWK;
  });
}

/**
 * In the page, as a UI's script does it: a proof without a nonce, the 401 that names one, then the proof with
 * it; `fetch` with `Authorization: DPoP` and `DPoP` headers (so a preflight asks for both).
 */
function callWithDpop(page: Page, url: string, method: string, token: string, jwk: JWK): Promise<Exchange[]> {
  return page.evaluate(
    async ({ url, method, token, jwk }) => {
      const { dpopKey } = globalThis as unknown as {
        dpopKey: { privateKey: Parameters<typeof crypto.subtle.sign>[1] };
      };
      const b64u = (bytes: ArrayBuffer | Uint8Array) =>
        btoa(String.fromCharCode(...new Uint8Array(bytes)))
          .replace(/\+/g, "-")
          .replace(/\//g, "_")
          .replace(/=+$/, "");
      const text = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
      const ath = b64u(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
      const proof = async (nonce: string | null) => {
        const input = `${b64u(text({ typ: "dpop+jwt", alg: "ES256", jwk }))}.${b64u(
          text({
            htm: method,
            htu: url,
            iat: Math.floor(Date.now() / 1000),
            jti: crypto.randomUUID(),
            ath,
            ...(nonce === null ? {} : { nonce }),
          }),
        )}`;
        const signature = await crypto.subtle.sign(
          { name: "ECDSA", hash: "SHA-256" },
          dpopKey.privateKey,
          new TextEncoder().encode(input),
        );
        return `${input}.${b64u(signature)}`;
      };
      const send = async (nonce: string | null) => {
        const response = await fetch(url, {
          method,
          headers: { authorization: `DPoP ${token}`, dpop: await proof(nonce) },
        });
        await response.text();
        return {
          status: response.status,
          nonce: response.headers.get("dpop-nonce"),
          challenge: response.headers.get("www-authenticate"),
        };
      };
      const first = await send(null);
      const second = await send(first.nonce);
      return [first, second];
    },
    { url, method, token, jwk },
  );
}

// Real Chromium on another origin: a browser UI holding its key in WebCrypto uses DPoP with server nonces.
describe.skipIf(!available.ok)("a browser UI on another origin using DPoP", { timeout: 120_000 }, () => {
  let api: TestServer;
  let ui: Awaited<ReturnType<typeof startPageServer>>;
  let browser: Browser;
  beforeAll(async () => {
    ui = await startPageServer();
    api = await startTestServer({
      env: {
        CORS_ALLOWED_ORIGINS: ui.origin,
        JWT_DPOP: "required",
        JWT_DPOP_NONCE_SECRET: "a-nonce-secret-of-at-least-32-bytes!",
      },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await api?.cleanup();
    await new Promise((resolve) => ui?.server.close(resolve));
  });

  it("reads the 401's nonce, proves with it, and gets the 200, for a GET and a POST", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${ui.origin}/`);
      const jwk = await makeKey(page);
      const token = await signToken(["platform:admin"], {
        claims: { cnf: { jkt: await calculateJwkThumbprint(jwk, "sha256") } },
      });
      for (const [method, path] of [
        ["GET", "/databases/default/migrations"],
        ["POST", "/databases/default/migrate"],
      ] as const) {
        const [first, second] = await callWithDpop(page, `${api.url}${path}`, method, token, jwk);
        expect(first?.status, method).toBe(401);
        expect(first?.nonce, method).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]+$/);
        expect(first?.challenge, method).toContain('error="use_dpop_nonce"');
        expect(second?.status, method).toBe(200);
        expect(second?.nonce, method).toBe(first?.nonce);
      }
    } finally {
      await page.close();
    }
  });
});
