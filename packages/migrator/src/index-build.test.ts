import { describe, expect, it } from "vitest";
import { parseIndexBuild } from "./index-build.js";

describe("parseIndexBuild", () => {
  it.each([
    ["create index concurrently users_email on users (email)", "users_email", '"users"'],
    [
      "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS Users_Email ON ONLY app.Users (email)",
      "users_email",
      '"app"."users"',
    ],
    ['create index concurrently "Mixed ""Case""" on "My Table" (a)', 'Mixed "Case"', '"My Table"'],
    [
      "-- platform-migrate: no-transaction\n/* a /* nested */ comment */ create index\tconcurrently\nix on t using gin (a)",
      "ix",
      '"t"',
    ],
  ])("reads the index and table of %j", (text, name, table) => {
    expect(parseIndexBuild(text)).toEqual({ kind: "create", name, table });
  });

  it.each([
    "create index concurrently on users (email)",
    // An index named through a helper is not in the text: treated as unnamed.
    "create index concurrently $? on users (email)",
  ])("reads %j as an unnamed build", (text) => {
    expect(parseIndexBuild(text)).toMatchObject({ kind: "create", name: null });
  });

  it.each([
    ["reindex index concurrently users_email", "index", '"users_email"'],
    ["REINDEX (VERBOSE) TABLE CONCURRENTLY app.users", "table", '"app"."users"'],
    ["reindex (concurrently) index ix", "index", '"ix"'],
    ["reindex (verbose, concurrently true) table t", "table", '"t"'],
  ])("reads %j as a REINDEX", (text, target, name) => {
    expect(parseIndexBuild(text)).toEqual({ kind: "reindex", target, name });
  });

  it.each([
    "create index users_email on users (email)",
    "create table concurrently (id int)",
    "reindex index users_email",
    "reindex (concurrently false) index users_email",
    "reindex (concurrently off) table t",
    "reindex (concurrently 0) table t",
    "reindex schema concurrently app",
    "select 'create index concurrently x on t (a)'",
    "drop index concurrently users_email",
    "",
    "-- create index concurrently x on t (a)",
    "/* unterminated",
    '"unterminated',
    "create\u00a0index concurrently ix on t (a)",
    "create index\u2003concurrently ix on t (a)",
  ])("reads %j as no concurrent build", (text) => {
    expect(parseIndexBuild(text)).toBeNull();
  });

  it("reads only the head of a huge statement", () => {
    const text = `create index concurrently ix on t (${"a, ".repeat(1_000_000)}a)`;
    expect(parseIndexBuild(text)).toEqual({ kind: "create", name: "ix", table: '"t"' });
  });
});
