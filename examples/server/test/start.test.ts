import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pnpmStart } from "./pnpm-start.js";

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
      const start = await pnpmStart(dataDir, 240_000);
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
});
