import { describe, expect, it } from "vitest";
import { jsonWithoutNul, withoutNul } from "./store.js";

// The inbox's JSON text must stay byte for byte what `JSON.stringify(value, withoutNul)` gave: the rows'
// keys dedupe against rows stored before, and the message column is compared by nothing but equality.
const NUL = "\u0000";
const BACKSLASH = "\\";

const cases: [string, unknown][] = [
  ["no NUL at all", { text: "hello", n: 1, ok: true, none: null, list: ["a", 2] }],
  ["a NUL in a value", { text: `a${NUL}b` }],
  ["only NULs", [NUL, `${NUL}${NUL}`]],
  ["a NUL after a backslash", { text: `${BACKSLASH}${NUL}` }],
  ["a NUL after two backslashes", { text: `${BACKSLASH}${BACKSLASH}${NUL}` }],
  ["the six characters \\u0000, which are not a NUL", { text: `${BACKSLASH}u0000` }],
  ["an escaped backslash before u0000", { text: `${BACKSLASH}${BACKSLASH}u0000` }],
  ["three backslashes before u0000", { text: `${BACKSLASH}${BACKSLASH}${BACKSLASH}u0000 and ${NUL}` }],
  ["a NUL in a key (left as it is, as the replacer leaves keys)", { [`k${NUL}`]: `v${NUL}` }],
  ["other control characters", { text: "\u0001\u001f\n\t\u2028" }],
  ["a lone surrogate next to a NUL", { text: `\ud800${NUL}\udc00` }],
  ["nested rows", [{ channel: "whatsapp", key: `id${NUL}`, message: { raw: { deep: [[`x${NUL}`]] } } }]],
  ["a bare string", `s${NUL}`],
];

describe("jsonWithoutNul", () => {
  it.each(cases)("%s: the same text as JSON.stringify with the withoutNul replacer", (_label, value) => {
    expect(jsonWithoutNul(value)).toBe(JSON.stringify(value, withoutNul));
  });

  it("writes U+FFFD for a NUL and keeps the text \\u0000 as text", () => {
    const parsed = JSON.parse(jsonWithoutNul({ nul: `a${NUL}b`, text: `${BACKSLASH}u0000` }));
    expect(parsed).toEqual({ nul: "a\uFFFDb", text: `${BACKSLASH}u0000` });
  });
});
