import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** Every package's and example's README and docs/*.md, and the repository's own top-level Markdown files. */
function documents(): string[] {
  const found = readdirSync(root).filter((name) => name.endsWith(".md"));
  for (const group of ["packages", "examples"]) {
    for (const name of readdirSync(join(root, group))) {
      const dir = join(group, name);
      if (existsSync(join(root, dir, "README.md"))) found.push(join(dir, "README.md"));
      if (existsSync(join(root, dir, "docs"))) {
        for (const file of readdirSync(join(root, dir, "docs"), { recursive: true, encoding: "utf8" }))
          if (file.endsWith(".md")) found.push(join(dir, "docs", file));
      }
    }
  }
  return found;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a Markdown file's headings make (code blocks skipped). */
function anchors(text: string): Set<string> {
  const outside = text.replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...outside.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1] as string)));
}

/** The relative link targets of a Markdown file, outside code blocks and inline code. */
function links(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe("relative links in READMEs and docs", () => {
  const files = documents();

  it("finds the documents it checks", () => {
    expect(files).toEqual(
      expect.arrayContaining(["packages/jwt-rbac/README.md", "packages/jwt-rbac/docs/api.md"]),
    );
  });

  it("the slug is GitHub's", () => {
    expect(slug("Sender-constrained tokens")).toBe("sender-constrained-tokens");
    expect(slug("`@agent-platform/jwt-rbac/hono`")).toBe("agent-platformjwt-rbachono");
    expect(slug("CORS and OPTIONS")).toBe("cors-and-options");
  });

  it.each(files)("%s: every relative link and #anchor resolves", (file) => {
    const text = readFileSync(join(root, file), "utf8");
    const broken = links(text).filter((target) => {
      const [path = "", fragment] = target.split("#");
      const resolved = path === "" ? join(root, file) : resolve(dirname(join(root, file)), decodeURI(path));
      if (!existsSync(resolved)) return true;
      if (fragment === undefined || !resolved.endsWith(".md") || statSync(resolved).isDirectory())
        return false;
      return !anchors(readFileSync(resolved, "utf8")).has(fragment);
    });
    expect(broken, `${relative(root, join(root, file))}: fix or remove these links`).toEqual([]);
  });
});
