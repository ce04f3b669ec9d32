import { join } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, inject, it } from "vitest";
import { expectEnforcedAuth, freePort, type Started, startServer } from "../src/apps.js";
import { userEnv } from "../src/exec.js";
import { runtimeBinary } from "../src/runtimes.js";

// Each runtime runs the consumer project's fetch-app.ts as it is, with the package as npm installed it.
let server: Started<{ port: number }> | undefined;
afterEach(() => server?.stop());

const bun = runtimeBinary("Bun", "@oven/bun-linux-x64", "bin/bun");
describe.skipIf(bun === undefined)("Bun", () => {
  it("runs the Fetch adapter (bun condition, WebCrypto build)", async () => {
    server = await startServer(bun as string, ["bun.ts"], userEnv());
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
  });
});

const deno = runtimeBinary("Deno", "@deno/linux-x64-glibc", "deno");
describe.skipIf(deno === undefined)("Deno", () => {
  it("runs the Fetch adapter from node_modules with only --allow-net (deno condition, WebCrypto build)", async () => {
    const env = userEnv({ DENO_DIR: join(inject("consumerDir"), ".deno"), DENO_NO_UPDATE_CHECK: "1" });
    server = await startServer(deno as string, ["run", "--allow-net=127.0.0.1", "deno.ts"], env);
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
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
