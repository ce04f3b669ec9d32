import { fileURLToPath } from "node:url";
import { compareVersions, parseVersion } from "@agent-platform/migrator";
import { lint } from "@agent-platform/migrator/lint";
import { describe, expect, it } from "vitest";
import { platformMigrations } from "./index.js";

const dir = fileURLToPath(new URL(".", import.meta.url));

// The last version that has shipped. Deployed databases record the checksum of every shipped file, so
// those files cannot change, not even to gain a silence comment: their findings are pinned below instead.
const SHIPPED = "2.5.6";

describe("the platform migrations under platform-migrate lint", () => {
  it("every migration after the shipped ones passes with no findings", async () => {
    const report = await lint(dir, { startAfter: SHIPPED });
    const unshipped = platformMigrations().filter(
      (m) => compareVersions(parseVersion(m.version), parseVersion(SHIPPED)) > 0,
    );
    expect(report.files).toBe(unshipped.length);
    expect(report.findings).toEqual([]);
  });

  // The migrator runs each under its default lock_timeout (ddlLockTimeoutMs), which satisfies
  // require-lock-timeout; the server sets no statementTimeoutMs, so require-statement-timeout fires once per
  // file. Those, the index builds without CONCURRENTLY and three 32-bit counters remain, recorded here.
  it("the shipped ones have exactly the known findings", async () => {
    const report = await lint(dir);
    expect(report.files).toBe(platformMigrations().length);
    expect(report.findings.map((f) => `${f.version} ${f.line}:${f.column} ${f.rule}`)).toEqual([
      "2.0.0 2:1 require-statement-timeout",
      "2.0.0 34:22 prefer-bigint-over-int",
      "2.0.0 35:22 prefer-bigint-over-int",
      "2.0.0 36:22 prefer-bigint-over-int",
      "2.3.0 2:1 require-statement-timeout",
      "2.3.0 3:1 require-concurrent-index-creation",
      "2.3.0 5:1 require-concurrent-index-creation",
      "2.5.0 2:1 require-statement-timeout",
      "2.5.6 3:1 require-statement-timeout",
      "2.5.6 4:1 require-concurrent-index-creation",
      "2.5.6 5:1 require-concurrent-index-creation",
    ]);
  });
});
