import { describe, expect, it } from "vitest";
import { describeRuleCases, lintOne } from "../rule-testing.js";

describeRuleCases("adding-field-with-default", [
  [
    "alter table accounts add column token uuid default gen_random_uuid();",
    "alter table accounts add column created_at timestamptz default now();",
  ],
]);

describe("adding-field-with-default", () => {
  it("adding-field-with-default: constants and stable functions are fine, unknown functions and identities are not", async () => {
    const report = await lintOne(
      [
        "set local lock_timeout = '2s';",
        "alter table accounts add column a bigint default 1 + 2;",
        "alter table accounts add column b jsonb not null default '{}'::jsonb;",
        "alter table accounts add column c timestamptz default current_timestamp;",
        "alter table accounts add column d double precision default random();",
        "alter table accounts add column e bigint generated always as identity;",
      ].join("\n"),
    );
    expect(report.findings.map((f) => [f.rule, f.line])).toEqual([
      ["adding-field-with-default", 5],
      ["adding-field-with-default", 6],
    ]);
  });
});
