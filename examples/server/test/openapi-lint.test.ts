import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startTestServer, type TestServer } from "./helpers.js";

const run = promisify(execFile);
const REDOCLY = join(import.meta.dirname, "..", "node_modules", ".bin", "redocly");

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

// The CI check of the served document: Redocly CLI's `recommended` ruleset, warnings included. The
// messaging channel is configured so that its operations are in the document too.
describe("/openapi.json under Redocly CLI's recommended ruleset", () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer({
      env: {
        WHATSAPP_VERIFY_TOKEN: "verify",
        WHATSAPP_APP_SECRET: "secret",
        WHATSAPP_ACCESS_TOKEN: "access",
        WHATSAPP_PHONE_NUMBER_ID: "1",
        WHATSAPP_API_BASE_URL: "http://127.0.0.1:9/v25.0",
      },
    });
    dir = await mkdtemp(join(tmpdir(), "openapi-lint-"));
  });
  afterAll(async () => {
    await server?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it("has no errors and no warnings", async () => {
    const document = await request(server, "GET", "/openapi.json");
    expect(Object.keys((document.body as { paths: object }).paths)).toContain("/whatsapp/inbox");
    const file = join(dir, "openapi.json");
    await writeFile(file, document.text);
    // Exit status 1 means errors; the JSON report is on stdout either way.
    const { stdout } = await run(REDOCLY, ["lint", file, "--extends", "recommended", "--format", "json"], {
      // No telemetry or update check: CI reaches only the npm registry.
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      timeout: 60_000,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
    const report = JSON.parse(stdout) as LintReport;
    const problems = report.problems.map(
      (problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });
});
