import { execFile } from "node:child_process";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
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

// libpg-query is an optional peer dependency needed only by `@agent-platform/migrator/lint`: a project that
// installs the migrator (and messaging, which uses it) to run migrations gets no parser, and the CLI's lint
// says in one line how to install it.
describe("a project that never imports ./lint", () => {
  // Apart from the consumer project, whose node_modules (with every optional peer) Node would find up the tree.
  const dir = mkdtempSync(join(tmpdir(), "agent-platform-without-lint-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const tarball = (name: string) => {
    const prefix = `agent-platform-${name}-`;
    const file = readdirSync(join(consumerDir, "tarballs")).find((entry) => entry.startsWith(prefix));
    if (!file) throw new Error(`no ${prefix}*.tgz in ${consumerDir}/tarballs`);
    return `file:${join(consumerDir, "tarballs", file)}`;
  };

  it("installs no libpg-query with the migrator and messaging", async () => {
    const dependencies = Object.fromEntries(
      ["common", "migrator", "messaging"].map((name) => [`@agent-platform/${name}`, tarball(name)]),
    );
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "without-lint", private: true, dependencies }),
    );
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], dir);
    expect(existsSync(join(dir, "node_modules/@agent-platform/migrator/package.json"))).toBe(true);
    expect(existsSync(join(dir, "node_modules/postgres/package.json"))).toBe(true);
    expect(existsSync(join(dir, "node_modules/libpg-query"))).toBe(false);
    // The root entry loads without it.
    const loaded = await run(
      "node",
      [
        "--input-type=module",
        "-e",
        'import("@agent-platform/migrator").then((m) => console.log(typeof m.createMigrator))',
      ],
      dir,
    );
    expect(loaded.trim()).toBe("function");
  });

  it("platform-migrate lint says how to install it, in one line, and exits 1", async () => {
    mkdirSync(join(dir, "migrations"), { recursive: true });
    writeFileSync(join(dir, "migrations", "1.0.0_one.up.sql"), "create table t (id bigint);");
    const { code, stdout, stderr } = await new Promise<{
      code: number | null;
      stdout: string;
      stderr: string;
    }>((resolve) => {
      execFile(
        "node",
        ["node_modules/.bin/platform-migrate", "lint", "migrations"],
        { cwd: dir, env: userEnv() },
        (error, out, err) => resolve({ code: error ? (error.code as number) : 0, stdout: out, stderr: err }),
      );
    });
    expect({ code, stdout }).toEqual({ code: 1, stdout: "" });
    expect(stderr).toBe(
      "platform-migrate: lint needs libpg-query, an optional peer dependency: npm install --save-dev libpg-query@^17.7.4\n",
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

  it("gets one ConfigError class from every package, in each module system", async () => {
    const report = JSON.parse(await run("node", ["config-error.cjs"], consumerDir));
    const everyPackage = {
      "@agent-platform/jwt-rbac": true,
      "@agent-platform/migrator": true,
      "@agent-platform/messaging": true,
    };
    expect(report).toEqual({
      same: { require: everyPackage, import: everyPackage },
      // The ESM and CJS builds are two classes, as for any dual package: isConfigError bridges them.
      crossBuild: { instanceOf: false, isConfigError: true },
    });
  });

  // Both at once: each is mostly waiting for a core. nodenext also checks every declaration file the
  // consumer loads (skipLibCheck off, so an error in the packages' .d.ts/.d.cts shows), and emits build/.
  it("type-checks under moduleResolution bundler and module nodenext, and compiles", async () => {
    const tsc = (config: string) =>
      run("node", ["node_modules/typescript/bin/tsc", "-p", config], consumerDir);
    await Promise.all([tsc("tsconfig.bundler.json"), tsc("tsconfig.nodenext.json")]);
  });

  it("the installed platform-telegram-webhook bin sets the webhook through the Bot API, never printing the token", async () => {
    const calls: { path: string | undefined; body: string }[] = [];
    const botApi = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on("end", () => {
        calls.push({ path: req.url, body });
        res.setHeader("content-type", "application/json");
        res.end('{"ok":true,"result":true,"description":"Webhook was set"}');
      });
    });
    botApi.listen(0, "127.0.0.1");
    await once(botApi, "listening");
    try {
      const env = userEnv({
        TELEGRAM_BOT_TOKEN: "42:consumer-bot-token",
        TELEGRAM_WEBHOOK_SECRET_TOKEN: "consumer-secret",
        TELEGRAM_API_BASE_URL: `http://127.0.0.1:${(botApi.address() as AddressInfo).port}`,
      });
      const url = "https://example.test/telegram/webhook";
      const args = ["node_modules/.bin/platform-telegram-webhook", "set", "--url", url];
      const stdout = await run("node", args, consumerDir, env);
      expect(stdout).toBe('{"ok":true,"result":true,"description":"Webhook was set"}\n');
      expect(calls.map((call) => [call.path, JSON.parse(call.body)])).toEqual([
        [
          "/bot42:consumer-bot-token/setWebhook",
          { url, secret_token: "consumer-secret", allowed_updates: ["message"] },
        ],
      ]);
    } finally {
      botApi.close();
    }
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
