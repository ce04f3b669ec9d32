import { describe, expect, it } from "vitest";
import { AuthError } from "../errors.js";
import { canonicalPath, canonicalSegment, MAX_PATH_LENGTH, segmentValue } from "./canonical-path.js";

const pathOf = (raw: string) => {
  const result = canonicalPath(raw);
  return result instanceof AuthError ? result : result.path;
};

describe("canonicalPath", () => {
  it.each([
    ["/", "/"],
    ["/?x=1", "/"],
    ["/agents", "/agents"],
    ["/agents/", "/agents"],
    ["/agents?x=/y/../z#f", "/agents"],
    ["/agents#frag", "/agents"],
    // Unreserved characters and !'()* are decoded, whatever the case of the hex digits.
    ["/%61gents/a%2D1", "/agents/a-1"],
    ["/%64%61%74%61%62%61%73%65%73/default/migrat%65", "/databases/default/migrate"],
    ["/x/%7e%5F%2e%30", "/x/~_.0"],
    ["/x/%21%27%28%29%2A", "/x/!'()*"],
    // Other escapes stay encoded, upper-cased.
    ["/x/a%3bb%3A%40%24%25", "/x/a%3Bb%3A%40%24%25"],
    ["/x/%c3%a9", "/x/%C3%A9"],
    ["/x/%F0%9F%98%80", "/x/%F0%9F%98%80"],
    // Characters a URI cannot carry raw are encoded, so both spellings are one path.
    ["/x/a b", "/x/a%20b"],
    ["/x/é", "/x/%C3%A9"],
    ["/x/😀", "/x/%F0%9F%98%80"],
    ['/x/"<>[]^`{|}', "/x/%22%3C%3E%5B%5D%5E%60%7B%7C%7D"],
    // Sub-delimiters, ":" and "@" are data in a path, kept raw.
    ["/x/a;b=c,d:e@f$g&h+i", "/x/a;b=c,d:e@f$g&h+i"],
    ["/x/...", "/x/..."],
    ["/x/.a/a.", "/x/.a/a."],
  ])("%j -> %j", (raw, expected) => {
    expect(pathOf(raw)).toBe(expected);
  });

  it.each([
    ["/databases%2Fdefault%2Fmigrate", "encoded '/' or '\\'"],
    ["/databases/default%2fmigrate", "encoded '/' or '\\'"],
    ["/x/a%5Cb", "encoded '/' or '\\'"],
    ["/x/a\\b", "backslash"],
    ["/x/a%00", "encoded NUL"],
    ["/x/a%0A", "encoded control character"],
    ["/x/a%7F", "encoded control character"],
    ["/x/a\u0000", "control character"],
    ["/x/a\tb", "control character"],
    ["/x/%", "invalid percent-escape"],
    ["/x/%4", "invalid percent-escape"],
    ["/x/%zz", "invalid percent-escape"],
    ["/x/%4?x", "invalid percent-escape"],
    ["/x/%C0%AF", "percent-escapes that are not UTF-8"], // overlong "/"
    ["/x/%C0%AE%C0%AE", "percent-escapes that are not UTF-8"], // overlong ".."
    ["/x/%E0%80%AF", "percent-escapes that are not UTF-8"],
    ["/x/%F0%80%80%AF", "percent-escapes that are not UTF-8"],
    ["/x/%ED%A0%80", "percent-escapes that are not UTF-8"], // a surrogate
    ["/x/%F4%90%80%80", "percent-escapes that are not UTF-8"], // above U+10FFFF
    ["/x/%C3", "percent-escapes that are not UTF-8"],
    ["/x/%C3x", "percent-escapes that are not UTF-8"],
    ["/x/%80", "percent-escapes that are not UTF-8"],
    ["/x/\ud800", "unpaired surrogate"],
    ["/x/./y", "dot segment"],
    ["/x/../y", "dot segment"],
    ["/x/..", "dot segment"],
    ["/x/../", "dot segment"],
    ["/x/%2e%2E/y", "dot segment"],
    ["/x/.%2e", "dot segment"],
    ["/%2e", "dot segment"],
    ["//x", "empty segment"],
    ["/x//y", "empty segment"],
    ["/x//", "empty segment"],
    ["", "it must start with '/'"],
    ["x/y", "it must start with '/'"],
    ["*", "it must start with '/'"],
    ["http://host/x", "it must start with '/'"],
  ])("%j is refused: %s", (raw, problem) => {
    const result = canonicalPath(raw);
    expect(result).toBeInstanceOf(AuthError);
    expect(result).toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
      reason: "invalid_path",
      detail: `Invalid request path: ${problem}`,
    });
    expect(JSON.parse((result as AuthError).body)).toEqual({
      detail: `Invalid request path: ${problem}`,
      error_code: "BAD_REQUEST",
    });
  });

  it("bounds the length of the path, not of the query", () => {
    expect(pathOf(`/${"a".repeat(MAX_PATH_LENGTH - 1)}?${"q".repeat(MAX_PATH_LENGTH)}`)).toHaveLength(
      MAX_PATH_LENGTH,
    );
    expect(pathOf(`/${"a".repeat(MAX_PATH_LENGTH)}`)).toMatchObject({ status: 400 });
  });

  it("is idempotent: a canonical path is its own canonical form", () => {
    for (const raw of ["/%61/%c3%a9/a b/é/%3b/!*", "/databases/x/migrat%65", "/x/%25%32%46"]) {
      const once = pathOf(raw) as string;
      expect(pathOf(once)).toBe(once);
    }
  });

  it("gives the segments", () => {
    expect(canonicalPath("/a/%62/c/")).toEqual({ path: "/a/b/c", segments: ["a", "b", "c"] });
    expect(canonicalPath("/")).toEqual({ path: "/", segments: [] });
  });
});

describe("segments", () => {
  it("canonicalSegment reads one segment as canonicalPath does", () => {
    expect(canonicalSegment("migrat%65")).toBe("migrate");
    expect(canonicalSegment("")).toEqual({ problem: "empty segment" });
    expect(canonicalSegment("a/b")).toEqual({ problem: "'/' in a segment" });
    expect(canonicalSegment("%2e")).toEqual({ problem: "dot segment" });
  });

  it("segmentValue decodes what a router hands the handler", () => {
    expect(segmentValue("a%20b")).toBe("a b");
    expect(segmentValue("%C3%A9")).toBe("é");
    // %25 is decoded once: "%2F" is the id, not a separator.
    expect(segmentValue("%252F")).toBe("%2F");
    expect(segmentValue("plain")).toBe("plain");
  });
});
