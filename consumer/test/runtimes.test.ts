import { join } from "node:path";
import { build } from "esbuild";
import { afterEach, describe, inject, it } from "vitest";
import { expectEnforcedAuth, freePort, type Started, startServer } from "../src/apps.js";
import { userEnv } from "../src/exec.js";
import { runtimeBinary } from "../src/runtimes.js";
import { expectWebhookDecisions } from "../src/webhooks.js";

// Each runtime serves the consumer project's runtime-app.ts as it is (the jwt-rbac Fetch adapter and the
// messaging webhooks on @agent-platform/messaging/inbound), with the packages as npm installed them.
let server: Started<{ port: number }> | undefined;
afterEach(() => server?.stop());

const bun = runtimeBinary("Bun", "@oven/bun-linux-x64", "bin/bun");
describe.skipIf(bun === undefined)("Bun", () => {
  it("runs the Fetch adapter and the messaging webhooks (bun condition, WebCrypto builds)", async () => {
    server = await startServer(bun as string, ["bun.ts"], userEnv());
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
    await expectWebhookDecisions(`http://127.0.0.1:${server.ready.port}`);
  });
});

const deno = runtimeBinary("Deno", "@deno/linux-x64-glibc", "deno");
describe.skipIf(deno === undefined)("Deno", () => {
  const env = userEnv({ DENO_DIR: join(inject("consumerDir"), ".deno"), DENO_NO_UPDATE_CHECK: "1" });

  // Only --allow-net: /inbound reads no environment, files or system information, unlike the root entry.
  it("runs the Fetch adapter and the messaging webhooks from node_modules with only --allow-net (deno condition, WebCrypto builds)", async () => {
    server = await startServer(deno as string, ["run", "--allow-net=127.0.0.1", "deno.ts"], env);
    await expectEnforcedAuth(`http://127.0.0.1:${server.ready.port}`, "webcrypto");
    await expectWebhookDecisions(`http://127.0.0.1:${server.ready.port}`);
  });
});

const workerd = runtimeBinary("workerd", "@cloudflare/workerd-linux-64", "bin/workerd");
describe.skipIf(workerd === undefined)("workerd", () => {
  it("runs the Worker bundled with esbuild as the READMEs say (workerd condition, WebCrypto builds)", async () => {
    const consumerDir = inject("consumerDir");
    // The recipe of packages/jwt-rbac/docs/runtimes.md and packages/messaging/README.md, "Runtimes": wrangler's
    // own esbuild settings.
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
    await expectWebhookDecisions(`http://127.0.0.1:${port}`);
  });
});
