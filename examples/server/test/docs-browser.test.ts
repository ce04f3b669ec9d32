import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, ensureChromium } from "./browser.js";
import { startDevKeyServer } from "./helpers.js";

const available = ensureChromium();
if (!available.ok) console.warn(`SKIPPED: the /docs browser tests: ${available.reason}`);

// /docs in a real headless Chromium: every operation listed, nothing fetched from anywhere but this
// server, and "Try it out" authorised with a pasted development token.
describe.skipIf(!available.ok)("/docs in a headless browser", { timeout: 120_000 }, () => {
  let server: Awaited<ReturnType<typeof startDevKeyServer>>;
  let browser: Browser;
  beforeAll(async () => {
    // No key configured: the development key, and its token, as under `pnpm start`.
    server = await startDevKeyServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.cleanup();
  });

  /** A browser context whose requests may go to 127.0.0.1 only; the others are aborted and listed. */
  async function loopbackOnly(): Promise<{ context: BrowserContext; elsewhere: string[] }> {
    const context = await browser.newContext();
    const elsewhere: string[] = [];
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === "127.0.0.1") return route.continue();
      elsewhere.push(url.href);
      return route.abort();
    });
    return { context, elsewhere };
  }

  it("lists every operation, loads nothing from elsewhere, and sends an authorised request that gets 200", async () => {
    const { context, elsewhere } = await loopbackOnly();
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));

    await page.goto(`${server.url}/docs`);
    await page.locator(".opblock").first().waitFor();

    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const expected = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const listed = await page
      .locator(".opblock-summary")
      .evaluateAll((summaries) =>
        summaries.map(
          (summary) =>
            `${summary.querySelector(".opblock-summary-method")?.textContent} ${summary.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`,
        ),
      );
    expect(listed.sort()).toEqual(expected);

    // Paste the development token into the bearer scheme.
    await page.locator(".auth-wrapper button.authorize").click();
    await page.locator(".modal-ux input").fill(server.devToken?.token ?? "");
    await page.locator(".modal-ux .auth-btn-wrapper button.authorize").click();
    await page.locator(".modal-ux button.btn-done").click();

    const operation = page.locator(".opblock-get", {
      has: page.locator('[data-path="/databases/{db_id}/migrations"]'),
    });
    await operation.locator(".opblock-summary").click();
    await operation.locator(".try-out__btn").click();
    await operation.locator('input[placeholder="db_id"]').fill("default");
    const [response] = await Promise.all([
      page.waitForResponse((candidate) => candidate.url() === `${server.url}/databases/default/migrations`),
      operation.locator("button.execute").click(),
    ]);
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${server.devToken?.token}`);
    await expect
      .poll(() =>
        operation.locator(".live-responses-table tr.response .response-col_status").first().textContent(),
      )
      .toContain("200");

    expect(elsewhere).toEqual([]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it("/redoc renders the document; its one outside request (Redocly's logo) is blocked by the page's CSP", async () => {
    const { context, elsewhere } = await loopbackOnly();
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (message.text().includes("violates the following Content Security Policy"))
        blocked.push(message.text());
    });
    await page.goto(`${server.url}/redoc`);
    await page.getByText("Agent Platform API (2.5.6)").waitFor();
    // Every operation is in ReDoc's side menu (collapsed, so attached rather than visible).
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        await page
          .getByRole("menuitem")
          .getByText(operation.summary, { exact: true })
          .first()
          .waitFor({ state: "attached" });
      }
    }
    expect(elsewhere).toEqual([]);
    expect(blocked.every((text) => text.includes("https://cdn.redoc.ly/redoc/logo-mini.svg"))).toBe(true);
    await context.close();
  });
});
