import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pnpmStart, SCRIPT } from "./pnpm-start.js";

if (SCRIPT === undefined)
  console.warn("SKIPPED: pnpm start on a terminal: util-linux's script is not installed");

// Not a timing test (start times are measured by `measure:start`, see the README): what a user sees.
describe("pnpm start at the repository root", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "server-start-"));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers /health, and Ctrl-C ends it with status 0 and no error line; a second start builds nothing", async () => {
    for (const round of ["first", "second"]) {
      const start = await pnpmStart(dataDir, { giveUpMs: 240_000 });
      await start.ready;
      expect(await start.interrupt(), `${round} start`).toBe(0);
      const output = `${start.stdout()}\n${start.stderr()}`;
      expect(output).not.toMatch(/ERR_PNPM|Command failed|\berror\b/i);
      expect(output).toContain('"msg":"Stopped"');
      if (round === "second") {
        // Sources unchanged since the first start: neither a package build nor the server's bundle.
        expect(start.stderr()).not.toMatch(/Building|Bundling/);
        expect(start.stderr()).toContain("Development token, scope platform:admin");
      }
    }
  }, 600_000);

  it.skipIf(SCRIPT === undefined)(
    "on a terminal: pretty log lines, and a typed Ctrl-C stops it with status 0 and no error line",
    async () => {
      const start = await pnpmStart(dataDir, { terminal: true, giveUpMs: 240_000 });
      await start.ready;
      expect(await start.interrupt()).toBe(0);
      const output = start.stdout();
      // pino-pretty's layout (time, coloured level, message), not JSON lines.
      expect(output).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] \S*INFO\S*: \S*Listening on http:\/\/127\.0\.0\.1:/);
      expect(output).toMatch(/INFO\S*: \S*Stopped/);
      expect(output).not.toContain('"level":');
      expect(output).not.toMatch(/ERR_PNPM|Command failed|\berror\b/i);
    },
    300_000,
  );
});
