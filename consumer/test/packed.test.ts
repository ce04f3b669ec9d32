import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { expectEnforcedAuth, type Started, startServer } from "../src/apps.js";
import { run, userEnv } from "../src/exec.js";
import { installedPackages, moduleSpecifiers, namedFiles } from "../src/exports.js";
import { expectWebhookDecisions } from "../src/webhooks.js";
import { repoRoot } from "../src/workspace.js";

const consumerDir = inject("consumerDir");
const packages = installedPackages();

describe.each(packages)("$name from its tarball", (installed) => {
  it("contains every file its package.json names", () => {
    const missing = namedFiles(installed).filter((file) => !existsSync(join(installed.dir, file)));
    expect(missing).toEqual([]);
  });

  it("contains the repository's LICENSE", () => {
    expect(readFileSync(join(installed.dir, "LICENSE"), "utf8")).toBe(
      readFileSync(join(repoRoot, "LICENSE"), "utf8"),
    );
  });
});

describe("Node consumer", () => {
  const specifiers = packages.flatMap(moduleSpecifiers);
  const load = async (script: string) =>
    JSON.parse(await run("node", [script, JSON.stringify(specifiers)], consumerDir)) as Record<
      string,
      string[]
    >;

  // A runtime dependency left in devDependencies, or a peer not declared, is not installed here: the load fails.
  it("import()s and require()s every subpath, with the same exports in both builds", async () => {
    const [esm, cjs] = await Promise.all([load("load.mjs"), load("load.cjs")]);
    expect(Object.keys(esm)).toEqual(specifiers);
    for (const specifier of specifiers) expect(esm[specifier]?.length, specifier).toBeGreaterThan(0);
    expect(cjs).toEqual(esm);
  });

  // Both at once: each is mostly waiting for a core. nodenext also checks every declaration file the
  // consumer loads (skipLibCheck off, so an error in the packages' .d.ts/.d.cts shows), and emits build/.
  it("type-checks under moduleResolution bundler and module nodenext, and compiles", async () => {
    const tsc = (config: string) =>
      run("node", ["node_modules/typescript/bin/tsc", "-p", config], consumerDir);
    await Promise.all([tsc("tsconfig.bundler.json"), tsc("tsconfig.nodenext.json")]);
  });

  describe("over HTTP", () => {
    let server: Started<{ express: number; hono: number; webhooks: number }> | undefined;
    afterAll(() => server?.stop());

    it("Express and Hono apps verify, refuse and enforce scopes (node:crypto build); the messaging webhooks decide", async () => {
      server = await startServer("node", ["build/server.js"], userEnv());
      await expectEnforcedAuth(`http://127.0.0.1:${server.ready.express}`, "node:crypto");
      await expectEnforcedAuth(`http://127.0.0.1:${server.ready.hono}`, "node:crypto");
      // The same Fetch handler and requests as on Bun, Deno and workerd, here on Node's WebCrypto.
      await expectWebhookDecisions(`http://127.0.0.1:${server.ready.webhooks}`);
    });
  });
});
