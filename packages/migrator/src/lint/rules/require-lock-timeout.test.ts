import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lint } from "../lint.js";
import {
  describeRuleCases,
  freshDir,
  lintFiles,
  lintOne,
  NO_TIMEOUTS,
  NO_TX,
  rulesOf,
} from "../rule-testing.js";

describeRuleCases("require-lock-timeout", [
  [
    "alter table accounts add column note text;",
    "set local lock_timeout = '2s';\nalter table accounts add column note text;",
    true,
    NO_TIMEOUTS,
  ],
]);

describe("require-lock-timeout", () => {
  it("require-lock-timeout: the migrator's own lock_timeout (ddlLockTimeoutMs, default 5 s) satisfies it", async () => {
    const files = { "1.0.0_one.up.sql": "alter table accounts drop column x;" };
    expect(rulesOf(await lintFiles(files, { ddlLockTimeoutMs: 2000 }))).not.toContain("require-lock-timeout");
    const dir = freshDir();
    try {
      writeFileSync(join(dir, "1.0.0_one.up.sql"), files["1.0.0_one.up.sql"]);
      // The defaults: a lock_timeout from the migrator, no statement_timeout.
      expect(rulesOf(await lint(dir))).toEqual(["ban-drop-column", "require-statement-timeout"]);
      await expect(lint(dir, { ddlLockTimeoutMs: -1 })).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("require-lock-timeout counts every statement that takes a lock, on new tables too", async () => {
    for (const sql of [
      "create type mood as enum ('sad', 'ok');",
      "comment on column t.c is 'an id';",
      "reindex (concurrently false) index i;",
      "vacuum (full false) t;",
      "lock table t in access share mode;",
      "create table t (id bigint);\nalter table t add column c text;",
    ]) {
      expect(rulesOf(await lintOne(sql, true, NO_TIMEOUTS)), sql).toContain("require-lock-timeout");
    }
    expect(rulesOf(await lintOne("select 1;\ninsert into t values (1);", true, NO_TIMEOUTS))).toEqual([]);
    expect(
      rulesOf(await lintOne("set foo.lock_timeout = '1s';\nlock table t;", true, NO_TIMEOUTS)),
    ).toContain("require-lock-timeout");
  });
  it("require-lock-timeout: a zero or reset timeout is none, and no-transaction migrations are exempt", async () => {
    expect(
      rulesOf(await lintOne("set lock_timeout = 0;\nalter table accounts drop column x;", true, NO_TIMEOUTS)),
    ).toContain("require-lock-timeout");
    expect(
      rulesOf(
        await lintOne(
          "set lock_timeout = '1s'; reset lock_timeout;\nalter table accounts drop column x;",
          true,
          NO_TIMEOUTS,
        ),
      ),
    ).toContain("require-lock-timeout");
    expect(rulesOf(await lintOne("drop index accounts_email_idx;", NO_TX, NO_TIMEOUTS))).not.toContain(
      "require-lock-timeout",
    );
  });
});
