import { describe, expect, it } from "vitest";
import { jsonForPostgres, textForPostgres } from "./postgres-text.js";

const NUL = "\u0000";
const BACKSLASH = "\\";
const FFFD = "\uFFFD";

/** What jsonForPostgres must equal: every refused character replaced in keys and values, then stringified. */
function mended(value: unknown): unknown {
  if (typeof value === "string") return textForPostgres(value);
  if (Array.isArray(value)) return value.map(mended);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [textForPostgres(k), mended(v)]));
  }
  return value;
}

const cases: [string, unknown][] = [
  ["nothing to mend", { text: "hello", n: 1, ok: true, none: null, list: ["a", 2], pair: "\ud83d\ude00" }],
  ["a NUL in a value", { text: `a${NUL}b` }],
  ["only NULs", [NUL, `${NUL}${NUL}`]],
  ["a NUL after a backslash", { text: `${BACKSLASH}${NUL}` }],
  ["a NUL after two backslashes", { text: `${BACKSLASH}${BACKSLASH}${NUL}` }],
  ["the six characters \\u0000, which are not a NUL", { text: `${BACKSLASH}u0000` }],
  ["an escaped backslash before u0000", { text: `${BACKSLASH}${BACKSLASH}u0000` }],
  ["three backslashes before u0000", { text: `${BACKSLASH}${BACKSLASH}${BACKSLASH}u0000 and ${NUL}` }],
  ["the text \\ud800, which is not a surrogate", { text: `${BACKSLASH}ud800 ${BACKSLASH}${BACKSLASH}udfff` }],
  ["a NUL in a key", { [`k${NUL}`]: `v${NUL}` }],
  ["a lone high surrogate", { text: "a\ud800b" }],
  ["a lone low surrogate", { text: "a\udc00b" }],
  ["a lone surrogate in a key", { "\udbff": 1 }],
  ["a reversed pair", { text: "\udc00\ud800" }],
  ["a lone surrogate next to a NUL and a pair", { text: `\ud800${NUL}\udc00\ud83d\ude00` }],
  ["other control characters", { text: "\u0001\u001f\n\t\u2028" }],
  [
    "nested rows",
    [{ channel: "whatsapp", key: `id${NUL}`, message: { raw: { deep: [[`x${NUL}\udfff`]] } } }],
  ],
  ["a bare string", `s${NUL}`],
];

describe("jsonForPostgres", () => {
  it.each(cases)("%s: every refused character becomes U+FFFD, nothing else changes", (_label, value) => {
    const text = jsonForPostgres(value);
    expect(JSON.parse(text)).toEqual(mended(value));
    // What PostgreSQL refuses is gone from the text.
    expect(text).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i);
  });

  it("is the text JSON.stringify writes when there is nothing to mend", () => {
    const value = { text: `${BACKSLASH}u0000 é \ud83d\ude00`, n: [1.5, null] };
    expect(jsonForPostgres(value)).toBe(JSON.stringify(value));
  });

  it("writes U+0000 as U+FFFD exactly as the replacer it replaces did, so stored keys still dedupe", () => {
    const value = { key: `wamid.${NUL}`, text: `${BACKSLASH}${NUL}` };
    const replacer = (_k: string, v: unknown) => (typeof v === "string" ? v.replaceAll(NUL, FFFD) : v);
    expect(jsonForPostgres(value)).toBe(JSON.stringify(value, replacer));
  });
});

describe("textForPostgres", () => {
  it("replaces U+0000 and unpaired surrogates and keeps pairs", () => {
    expect(textForPostgres(`a${NUL}\ud800\udc00\udc00\ud800b`)).toBe(`a${FFFD}\ud800\udc00${FFFD}${FFFD}b`);
  });
});
