// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are migration source code under test
import { describe, expect, it } from "vitest";
import { checksum, codeFingerprint } from "./checksum.js";

describe("codeFingerprint", () => {
  it("is the same for one migration printed by different compilers", () => {
    // As printed by vitest and by tsx (esbuild with minified whitespace) for the same source.
    const vitest = `async ({ sql }) => {
\t\t\tawait sql\`create table messages (id int)\`;
\t\t\t// a comment the other printer drops
\t\t\tif (process.env.X) {
\t\t\t\tprocess.stdout.write("mid-run\\n");
\t\t\t\tawait new Promise(() => {});
\t\t\t}
\t\t}`;
    const tsx = `async({sql})=>{await sql\`create table messages (id int)\`;if(process.env.X){process.stdout.write('mid-run\\n');await new Promise(()=>{})}}`;
    expect(codeFingerprint(vitest)).toBe(codeFingerprint(tsx));
    expect(codeFingerprint("sql => sql`select 1`")).toBe(codeFingerprint("(sql) => sql`select 1`"));
  });

  it("keeps the SQL in template and string literals exactly", () => {
    const base = "({ sql }) => sql`create table a (id int)`";
    expect(codeFingerprint(base)).not.toBe(codeFingerprint("({ sql }) => sql`create table a (id  int)`"));
    expect(codeFingerprint(base)).not.toBe(codeFingerprint("({ sql }) => sql`create table a (id bigint)`"));
    expect(codeFingerprint('() => f("a, b")')).not.toBe(codeFingerprint('() => f("a b")'));
  });

  it("normalises whitespace inside template substitutions but not around them", () => {
    expect(codeFingerprint("sql`select ${ sql(name) } from t`")).toBe(
      codeFingerprint("sql`select ${sql(name)} from t`"),
    );
    expect(codeFingerprint("sql`a ${x} b`")).not.toBe(codeFingerprint("sql`a ${x}b`"));
    expect(codeFingerprint("sql`a ${ {k: `in ${y}`}.k } b`")).toBe(
      codeFingerprint("sql`a ${{k:`in ${y}`}.k} b`"),
    );
  });

  it("keeps the words apart", () => {
    expect(codeFingerprint("async () => { return await x; }")).toBe("async=>{return await x}");
  });
});

describe("checksum", () => {
  it("is a sha256 that ignores CRLF line endings", () => {
    expect(checksum("create table a();\r\n")).toBe(checksum("create table a();\n"));
    expect(checksum("x")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("codeFingerprint and automatic semicolons", () => {
  it("matches code with and without semicolons", () => {
    const asi = "async ({ sql }) => {\n  const n = 1\n  await sql`select ${n}`\n}";
    const minified = "async({sql})=>{const n=1;await sql`select ${n}`}";
    expect(codeFingerprint(asi)).toBe(codeFingerprint(minified));
  });
});
