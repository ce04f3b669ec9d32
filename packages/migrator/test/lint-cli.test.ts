import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cli, requireBuiltCli } from "./cli-process.js";

requireBuiltCli();

const root = mkdtempSync(join(tmpdir(), "migrator-lint-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function directory(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

const clean = directory("clean", {
  "1.0.0_users.up.sql": "create table users (id bigint primary key, email text not null);",
  "1.0.0_users.down.sql": "drop table users;",
  "1.1.0_users_email.up.sql":
    "-- platform-migrate: no-transaction\ncreate index concurrently if not exists users_email_idx on users (email);",
});
const warnings = directory("warnings", {
  "1.0.0_old.up.sql": "create table old (at timestamp);",
});
const unsafe = directory("unsafe", {
  "1.0.0_users.up.sql": "create table users (id bigint primary key, email text);",
  "1.1.0_users_email.up.sql":
    "set local lock_timeout = '2s';\ncreate index users_email_idx on users (email);",
});

describe("platform-migrate lint", () => {
  it("exits 0 with a summary when nothing is found", async () => {
    // The migrator's own statement_timeout satisfies require-statement-timeout, as its lock_timeout does the other.
    const run = await cli(["lint", clean, "--statement-timeout-ms", "30000"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout.trim()).toBe("2 files linted: 0 error(s), 0 warning(s)");
  });

  it("exits 0 on warnings only, and prints each one", async () => {
    const run = await cli(["lint", "--dir", warnings]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`${join(warnings, "1.0.0_old.up.sql")}:1:22: warning prefer-timestamptz:`);
  });

  it("exits 1 on an error finding, naming file, line, column, rule and what to do", async () => {
    const run = await cli(["lint", unsafe, "--statement-timeout-ms", "30000"]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      `${join(unsafe, "1.1.0_users_email.up.sql")}:2:1: error require-concurrent-index-creation: CREATE INDEX on the existing table users without CONCURRENTLY`,
    );
    expect(run.stdout).toContain("hint: CREATE INDEX CONCURRENTLY");
    expect(run.stdout.trim().split("\n").at(-1)).toBe("2 files linted: 1 error(s), 0 warning(s)");
  });

  it("--json prints the report", async () => {
    const run = await cli(["lint", unsafe, "--json", "--statement-timeout-ms", "30000"]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({
      files: 2,
      errors: 1,
      warnings: 0,
      findings: [
        {
          rule: "require-concurrent-index-creation",
          severity: "error",
          version: "1.1.0",
          line: 2,
          column: 1,
        },
      ],
    });
  });

  it("--start-after skips shipped migrations", async () => {
    const run = await cli(["lint", unsafe, "--start-after", "1.1.0", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ files: 0, findings: [] });
  });

  it.each([
    [["lint", clean, "extra"], /unexpected argument "extra"/],
    [["lint", clean, "--to", "1.0.0"], /lint takes only \[DIR\]/],
    [["lint", clean, "--database-url", "postgres://x@127.0.0.1/x"], /lint takes only \[DIR\]/],
    [["status", "--start-after", "1.0.0"], /--start-after is for lint/],
    [["status", "--enable", "require-table-schema"], /--enable is for lint/],
    [["lint", clean, "--postgres-version", "15.2"], /--postgres-version needs a major version/],
  ])("exits 2 with the usage for %j", async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it("exits 1 with one line when the directory cannot be read or --start-after is no version", async () => {
    const missing = await cli(["lint", join(root, "missing")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(
      /^platform-migrate: Cannot read the migrations directory .*missing/,
    );
    const version = await cli(["lint", clean, "--start-after", "latest", "--json"]);
    expect(version.code).toBe(1);
    expect(JSON.parse(version.stderr)).toMatchObject({ error: { code: "INVALID_VERSION" } });
    const enable = await cli(["lint", clean, "--enable", "ban-drop-table"]);
    expect(enable.code).toBe(1);
    expect(enable.stderr.trim()).toBe(
      'platform-migrate: `enable` names rules that are off by default; "ban-drop-table" is not one',
    );
  });

  it("--postgres-version and --enable reach the rules that read them", async () => {
    const dir = directory("options", {
      "1.0.0_vacuum.up.sql": "-- platform-migrate: no-transaction\nvacuum full accounts;",
      "1.1.0_t.up.sql": "create table t (id bigint);",
    });
    const rules = async (...flags: string[]) =>
      (
        JSON.parse(
          (await cli(["lint", dir, "--json", "--statement-timeout-ms", "1000", ...flags])).stdout,
        ) as {
          findings: { rule: string }[];
        }
      ).findings.map((finding) => finding.rule);
    expect(await rules()).toEqual([]);
    expect(await rules("--postgres-version", "19", "--enable", "require-table-schema")).toEqual([
      "prefer-repack",
      "require-table-schema",
    ]);
  });
});

describe("lint() and the parser's WebAssembly", () => {
  it("are not loaded by importing the package, nor ./lint, only by the first lint() call", () => {
    const script = `
      const loaded = () => Object.keys(require.cache).some((file) => file.includes("libpg-query"));
      require(${JSON.stringify(fileURLToPath(new URL("../dist/index.cjs", import.meta.url)))});
      const { lint } = require(${JSON.stringify(fileURLToPath(new URL("../dist/lint.cjs", import.meta.url)))});
      const before = loaded();
      lint(${JSON.stringify(clean)}).then(() => console.log(JSON.stringify([before, loaded()])));
    `;
    expect(JSON.parse(execFileSync(process.execPath, ["-e", script], { encoding: "utf8" }))).toEqual([
      false,
      true,
    ]);
  });
});
