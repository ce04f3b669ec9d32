import { describe, it } from "vitest";
import { createTestDatabase, TEST_DATABASE_URL } from "../databases.js";
import { startAgentStub } from "./support/agent-stub.js";
import { spawnServer } from "./support/child-server.js";
import { startGraphStub, waitFor } from "./support/graph-stub.js";
import { channelEnv, delivery, postDelivery, textMessage } from "./support/whatsapp.js";

/**
 * SIGTERM or Ctrl-C (SIGINT) while the worker's agent call, or its send to the chat product, hangs: the server
 * exits at SHUTDOWN_TIMEOUT_MS, not at the call's own timeout, leaves the message leased, and the restarted
 * server answers it exactly once when the lease expires. Real processes, a real signal, stand-ins on loopback.
 */

const SHUTDOWN_TIMEOUT_MS = 500;
// Far longer than the shutdown deadline, and under the lease (the server refuses a lease a call could outlast).
const CALL_TIMEOUT_MS = 5_000;
const LEASE_MS = 5_500;
// The deadline, then closing the pools and exiting (measured about 0.5 s); well before the call's own timeout.
const EXIT_WITHIN_MS = SHUTDOWN_TIMEOUT_MS + 2_500;

// Two server processes in turn on one database: real PostgreSQL (an embedded data directory is one process's).
describe.skipIf(!TEST_DATABASE_URL)("stopping while a call to the agent or the chat product hangs", () => {
  // Both signals and both calls, each once: the signals share one handler, and four pairs of server processes
  // at once are more than the shared machine should carry for this.
  it.concurrent.for([
    ["SIGTERM", "agent"],
    ["SIGINT", "send"],
  ] as const)(
    "%s during the %s call: exits at the deadline, then the restart answers once",
    { timeout: 60_000 },
    async ([signal, hung], { expect, onTestFinished }) => {
      // Each case cleans up its own (they run at once).
      const cleanups: (() => Promise<unknown>)[] = [];
      onTestFinished(async () => {
        for (const cleanup of cleanups.reverse()) await cleanup();
      });
      const database = await createTestDatabase();
      cleanups.push(() => database.drop());
      const graph = await startGraphStub();
      cleanups.push(() => graph.close());
      const agent = await startAgentStub({ hold: (index) => hung === "agent" && index === 0 });
      cleanups.push(() => agent.close());
      if (hung === "send") graph.answer = (_, index) => (index === 0 ? "hang" : 200);
      const spawn = async () => {
        const server = await spawnServer({
          DATABASE_URL: database.url,
          ...channelEnv(graph.url, {
            AGENT_URL: agent.url,
            AGENT_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
            WHATSAPP_API_TIMEOUT_MS: String(CALL_TIMEOUT_MS),
            MESSAGING_VISIBILITY_TIMEOUT_MS: String(LEASE_MS),
            SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
          }),
        });
        cleanups.push(() => server.kill("SIGKILL"));
        return server;
      };

      const first = await spawn();
      const stored = await postDelivery(
        first.url,
        delivery([textMessage(`wamid.${signal}.${hung}`, "15557770000", "hello")]),
      );
      expect(stored.status).toBe(200);
      if (hung === "agent") await waitFor("the agent call", () => agent.held.length === 1);
      else await waitFor("the send", () => graph.requests.length === 1);

      const signalled = performance.now();
      await first.kill(signal);
      const exitMs = performance.now() - signalled;
      expect(first.child.exitCode).toBe(0);
      expect(exitMs).toBeLessThan(EXIT_WITHIN_MS);
      if (hung === "agent") {
        // The server closed the call at its deadline, not the call's own timeout.
        const closedAt = agent.held[0]?.closedAt;
        expect(closedAt).toBeDefined();
        expect((closedAt as number) - signalled).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 1_500);
      }
      expect(first.output.join("\n")).toContain("the message stays leased");
      expect(graph.accepted()).toHaveLength(0);

      // The restarted server takes the message once its lease expires, and answers it once.
      const second = await spawn();
      await waitFor("the reply after the restart", () => graph.accepted().length === 1, LEASE_MS + 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(graph.accepted().map((request) => request.body.text?.body)).toEqual(["agent: hello"]);
      console.info(`${signal} during the ${hung} call: exited 0 after ${exitMs.toFixed(0)} ms`);
      await second.kill("SIGTERM");
    },
  );
});
