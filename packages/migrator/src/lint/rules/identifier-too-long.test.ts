import { describe, expect, it } from "vitest";
import { describeRuleCases, lintOne, rulesOf } from "../rule-testing.js";

describeRuleCases("identifier-too-long", [
  [`create table ${"t".repeat(64)} (id bigint);`, `create table ${"t".repeat(63)} (id bigint);`],
]);

describe("identifier-too-long", () => {
  it("identifier-too-long counts UTF-8 bytes, and a long function body is not a name", async () => {
    // 32 × "é" is 32 characters but 64 bytes.
    expect(rulesOf(await lintOne(`create table "${"é".repeat(32)}" (id bigint);`))).toEqual([
      "identifier-too-long",
    ]);
    expect(rulesOf(await lintOne(`create table "${"é".repeat(31)}" (id bigint);`))).toEqual([]);
    const upper = await lintOne(`create table accounts_${"X".repeat(60)} (id bigint);`);
    expect(upper.findings).toMatchObject([{ rule: "identifier-too-long", line: 1, column: 14 }]);
    const quoted = await lintOne(`alter table t add column "${"q".repeat(62)}""x" int;`);
    expect(rulesOf(quoted)).toContain("identifier-too-long");
    const body = `select ${"1 + ".repeat(40)}1`;
    expect(rulesOf(await lintOne(`create function f() returns int language sql as $$ ${body} $$;`))).toEqual(
      [],
    );
  });
});
