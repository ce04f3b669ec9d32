import { describe, expect, it } from "vitest";
import { checksum, checksumOf } from "./checksum.js";
import type { Migration } from "./types.js";

describe("checksum", () => {
  it("is a sha256 that ignores CRLF line endings", () => {
    expect(checksum("create table a();\r\n")).toBe(checksum("create table a();\n"));
    expect(checksum("x")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("checksumOf", () => {
  const up: Migration["up"] = ({ sql }) => sql`create table a (id int)`;

  it("hashes the source text, or takes the author's checksum as given", () => {
    expect(checksumOf({ version: "1.0.0", name: "a", up, source: "create table a (id int)" })).toBe(
      checksum("create table a (id int)"),
    );
    expect(checksumOf({ version: "1.0.0", name: "a", up, checksum: "v2" })).toBe("v2");
  });

  it("is null for a code migration without source or checksum, however its code is printed", () => {
    // The compiled text is not hashed: a minifier renaming one parameter must not read as drift.
    const minified: Migration["up"] = ({ sql: s }) => s`create table a (id int)`;
    expect(checksumOf({ version: "1.0.0", name: "a", up })).toBeNull();
    expect(checksumOf({ version: "1.0.0", name: "a", up: minified })).toBeNull();
  });
});
