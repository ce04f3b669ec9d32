import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAULTS_UNAVAILABLE, type InboxCluster, startInboxCluster } from "./inbox-cluster.js";
import { ANSWER_BOUND_MS, RESUME_BOUND_MS, type Sent, steadyLoad } from "./load.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(FAULTS_UNAVAILABLE !== undefined)(
  "the inbox PostgreSQL killed, then frozen, under load",
  () => {
    let cluster: InboxCluster;
    beforeAll(async () => {
      cluster = await startInboxCluster({ count: 2 });
    }, 120_000);
    afterAll(async () => {
      await cluster?.close();
    });

    /** Load on both servers: `fault` runs 1.5 s in, resolves when the database answers again; 3 s more of load. */
    async function underLoad(prefix: string, fault: () => Promise<void>) {
      let stopAt = Number.POSITIVE_INFINITY;
      const load = steadyLoad({
        urls: cluster.servers.map((server) => server.url),
        perSecond: 20,
        until: () => performance.now() >= stopAt,
        patienceMs: 15_000,
        maxDeliveries: 400,
        prefix,
      });
      await sleep(1_500);
      await fault();
      const backAt = performance.now();
      stopAt = backAt + 3_000;
      const sent = await load;
      const stored = new Set(
        await cluster.pg.admin(
          async (sql) =>
            (await sql<{ message_id: string }[]>`SELECT message_id FROM messaging.inbox`).map(
              (row) => row.message_id,
            ),
          "inbox",
        ),
      );
      return { sent, backAt, stored };
    }

    function check(name: string, sent: Sent[], backAt: number, stored: Set<string>) {
      const slowest = Math.max(...sent.map((each) => each.ms));
      const refused = sent.filter((each) => each.status === 503);
      const firstStoredAfter = sent.find((each) => each.sentAt >= backAt && each.status === 200);
      const lastRefusedAfter = sent.filter((each) => each.sentAt >= backAt && each.status !== 200).at(-1);
      console.info(
        `${name}: ${sent.length} deliveries, ${refused.length} refused (503), slowest answer ${Math.round(slowest)} ms, ` +
          `last refusal sent ${lastRefusedAfter === undefined ? "-" : Math.round(lastRefusedAfter.sentAt - backAt)} ms ` +
          `and first stored ${firstStoredAfter === undefined ? "-" : Math.round(firstStoredAfter.sentAt - backAt)} ms after the database answered`,
      );
      // Every delivery answered, with 200 or 503, within the bound.
      for (const each of sent) {
        expect([200, 503], `${each.id} after ${Math.round(each.ms)} ms`).toContain(each.status);
        expect(each.ms, each.id).toBeLessThan(ANSWER_BOUND_MS);
      }
      expect(refused.length, "the fault was felt").toBeGreaterThan(0);
      // Storing resumes within about a second of the database answering.
      const late = sent.filter((each) => each.sentAt >= backAt + RESUME_BOUND_MS && each.status !== 200);
      expect(late.map((each) => each.id)).toEqual([]);
      // Nothing acknowledged is lost.
      const lost = sent.filter((each) => each.status === 200 && !stored.has(each.id));
      expect(lost.map((each) => each.id)).toEqual([]);
    }

    it("kill -9 for 5 s: every delivery answered within the bound, storing resumes within a second, none lost", async () => {
      const { sent, backAt, stored } = await underLoad("killed", async () => {
        cluster.pg.signal("SIGKILL");
        await sleep(5_000);
        await cluster.pg.start();
      });
      check("kill -9 for 5 s", sent, backAt, stored);
    }, 60_000);

    it("frozen (SIGSTOP) for 7 s: the commit under way is answered within the bound, not after the freeze", async () => {
      const { sent, backAt, stored } = await underLoad("frozen", async () => {
        cluster.pg.signal("SIGSTOP");
        await sleep(7_000);
        cluster.pg.signal("SIGCONT");
        await cluster.pg.admin((sql) => sql`SELECT 1`);
      });
      check("SIGSTOP for 7 s", sent, backAt, stored);
    }, 60_000);
  },
);
