import { join } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, expect, inject, it } from "vitest";
import { expectEnforcedAuth, freePort, type Started, startServer } from "../src/apps.js";
import { run, userEnv } from "../src/exec.js";
import { runtimeBinary } from "../src/runtimes.js";

// Each runtime runs the consumer project's fetch-app.ts as it is, with the package as npm installed it.
let server: Started<{ port: number }> | undefined;
afterEach(() => server?.stop());

/** What fixture/messaging-check.ts prints: a signed delivery authentic, a forged or unsigned one not, parsed. */
function expectMessagingChecks(stdout: string): void {
  expect(JSON.parse(stdout)).toMatchObject({
    signed: true,
    forged: false,
    unsigned: false,
    parsed: {
      kind: "events",
      statuses: 0,
      messages: [{ id: "m1", accountId: "222", from: "491", type: "text", text: "hi", supported: true }],
    },
  });
}

const bun = runtimeBinary("Bun", "@oven/bun-linux-x64", "bin/bun");
describe.skipIf(bun === undefined)("Bun", () => {
  it("runs the Fetch adapter (bun condition, WebCrypto build)", async () => {
    server = await startServer(bun as string, ["bun.ts"], userEnv());
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
  });

  it("checks a WhatsApp signature and parses a delivery with @agent-platform/messaging", async () => {
    expectMessagingChecks(await run(bun as string, ["messaging-check.ts"], inject("consumerDir")));
  });
});

const deno = runtimeBinary("Deno", "@deno/linux-x64-glibc", "deno");
describe.skipIf(deno === undefined)("Deno", () => {
  const env = userEnv({ DENO_DIR: join(inject("consumerDir"), ".deno"), DENO_NO_UPDATE_CHECK: "1" });

  it("runs the Fetch adapter from node_modules with only --allow-net (deno condition, WebCrypto build)", async () => {
    server = await startServer(deno as string, ["run", "--allow-net=127.0.0.1", "deno.ts"], env);
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
  });

  // --allow-env and --allow-sys: loading the package's root entry runs umzug's dependencies (through the
  // migrator), which read the environment and the home directory at import time.
  it("checks a WhatsApp signature and parses a delivery with @agent-platform/messaging (--allow-env --allow-sys)", async () => {
    const args = ["run", "--allow-env", "--allow-sys", "messaging-check.ts"];
    expectMessagingChecks(await run(deno as string, args, inject("consumerDir"), env));
  });
});

const workerd = runtimeBinary("workerd", "@cloudflare/workerd-linux-64", "bin/workerd");
describe.skipIf(workerd === undefined)("workerd", () => {
  it("runs the Worker bundled with esbuild as the README says (workerd condition, WebCrypto build)", async () => {
    const consumerDir = inject("consumerDir");
    // The recipe of packages/jwt-rbac/README.md, "Runtimes": wrangler's own esbuild settings.
    await build({
      entryPoints: [join(consumerDir, "worker.ts")],
      outfile: join(consumerDir, "build", "worker.js"),
      bundle: true,
      format: "esm",
      platform: "browser",
      conditions: ["workerd", "worker", "browser"],
      logLevel: "silent",
    });
    const port = await freePort();
    const args = ["serve", "workerd.capnp", "--socket-addr", `http=127.0.0.1:${port}`];
    server = await startServer(workerd as string, args, userEnv(), port);
    await expectEnforcedAuth(`http://127.0.0.1:${port}`, "webcrypto");
  });
});
