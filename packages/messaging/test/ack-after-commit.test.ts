import { whatsAppSignature } from "@agent-platform/test-support/webhook-signatures";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { whatsapp } from "../src/channels/whatsapp/index.js";
import { blockInboxWrites } from "./support/block-writes.js";
import {
  connect,
  DATABASES,
  freshPostgres,
  TEST_DATABASE_URL,
  type TestDatabase,
} from "./support/database.js";
import { type ServedMessaging, serveMessaging } from "./support/serve.js";

/**
 * The webhook answers 200 only once the delivery's rows are committed, and 503 when they cannot be: a
 * 200 sent earlier would tell the chat product to forget a message the inbox may never hold. These run
 * against the package alone (createMessaging served over HTTP), with the insert made slow by a lock held
 * in a second session and made to fail by a trigger.
 */

const APP_SECRET = "app-secret";

function delivery(id: string) {
  return {
    object: "whatsapp_business_account",
    entry: [
      {
        changes: [
          {
            value: {
              metadata: { phone_number_id: "1" },
              messages: [{ id, from: "15550001111", type: "text", text: { body: id } }],
            },
          },
        ],
      },
    ],
  };
}

function post(url: string, id: string): Promise<Response> {
  const raw = JSON.stringify(delivery(id));
  return fetch(`${url}/whatsapp/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": whatsAppSignature(raw, APP_SECRET),
    },
    body: raw,
  });
}

/**
 * A fresh database per test, and createMessaging on it served over HTTP with its inbox migrated and its
 * worker idle (nothing here is to be answered).
 */
function useServed(fresh: () => Promise<TestDatabase>) {
  const current = {} as {
    database: TestDatabase;
    sql: ReturnType<typeof connect>;
    messaging: ServedMessaging;
  };
  beforeEach(async () => {
    current.database = await fresh();
    current.sql = connect(current.database);
    current.messaging = await serveMessaging({
      sql: current.sql,
      channels: [
        whatsapp({
          appSecret: APP_SECRET,
          accessToken: "a",
          phoneNumberId: "1",
          apiBaseUrl: "http://127.0.0.1:9",
        }),
      ],
      worker: { startDelayMs: 3_600_000 },
      commit: { maxWaitMs: 10_000 },
    });
  });
  afterEach(async () => {
    await current.messaging.close();
    await current.sql.end();
    await current.database.drop();
  });
  return current;
}

describe.each(DATABASES)("the webhook's answer and its insert, on $name", ({ fresh }) => {
  const current = useServed(fresh);

  const stored = async () =>
    (
      await current.sql<{ message_id: string }[]>`SELECT message_id FROM messaging.inbox ORDER BY message_id`
    ).map((row) => row.message_id);

  it.each([
    ["an error of the database's state (raise_exception)", "P0001"],
    ["an error of the row's content (check_violation), isolated by the group commit", "23514"],
  ])(
    "is 503 with nothing stored when the insert fails with %s, and 200 once it can commit",
    async (_, code) => {
      await current.sql.unsafe(`
      CREATE FUNCTION messaging.refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'insert refused by the test' USING ERRCODE = '${code}'; END $$;
      CREATE TRIGGER refuse_insert BEFORE INSERT ON messaging.inbox
        FOR EACH ROW EXECUTE FUNCTION messaging.refuse_insert();
    `);
      const refused = await post(current.messaging.url, "wamid.refused");
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({
        detail: "Inbox unavailable, retry later",
        error_code: "SERVICE_UNAVAILABLE",
      });
      expect(await stored()).toEqual([]);

      await current.sql.unsafe(
        "DROP TRIGGER refuse_insert ON messaging.inbox; DROP FUNCTION messaging.refuse_insert();",
      );
      const accepted = await post(current.messaging.url, "wamid.refused");
      expect(accepted.status).toBe(200);
      expect(await stored()).toEqual(["wamid.refused"]);
    },
  );
});

describe.skipIf(TEST_DATABASE_URL === undefined)(
  "the webhook's answer waits for its commit (PostgreSQL)",
  () => {
    const current = useServed(freshPostgres);

    /** The response of a POST, and whether it has arrived yet. */
    function pending(id: string) {
      const state = { settled: false };
      const response = post(current.messaging.url, id).finally(() => {
        state.settled = true;
      });
      return { state, response };
    }

    it("answers nothing while the insert waits on a lock held by another session, then 200 with the row committed", async () => {
      const lock = await blockInboxWrites(current.database.url);
      try {
        const { state, response } = pending("wamid.slow");
        await lock.waitForBlockedInsert();
        // The insert is in the database, waiting: an answer now would come before the commit.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(state.settled).toBe(false);
        const observer = connect(current.database);
        try {
          expect(await observer`SELECT 1 FROM messaging.inbox`).toHaveLength(0);
        } finally {
          await observer.end();
        }
        await lock.release();
        const answer = await response;
        expect(answer.status).toBe(200);
        expect(await answer.json()).toEqual({ status: "accepted", received: 1, duplicates: 0 });
        // Committed by the time the answer arrived: another session sees the row.
        const after = connect(current.database);
        try {
          expect(await after`SELECT message_id FROM messaging.inbox`).toEqual([{ message_id: "wamid.slow" }]);
        } finally {
          await after.end();
        }
      } finally {
        await lock.release().catch(() => undefined);
      }
    });

    it("answers 503, nothing stored, when the waiting insert's session is killed", async () => {
      const lock = await blockInboxWrites(current.database.url);
      try {
        const { state, response } = pending("wamid.killed");
        const pid = await lock.waitForBlockedInsert();
        expect(state.settled).toBe(false);
        await lock.terminate(pid);
        const answer = await response;
        expect(answer.status).toBe(503);
      } finally {
        await lock.release();
      }
      expect(await current.sql`SELECT 1 FROM messaging.inbox`).toHaveLength(0);
    });
  },
);
