/**
 * The old floor of the webhook, written by hand: `node --import tsx insert-per-request.ts` with DATABASE_URL.
 * node:http, no framework; each POST's body is read, JSON-parsed for its first message id, and stored with one
 * `INSERT ... ON CONFLICT DO NOTHING` committed on its own (autocommit; a pool of 10 like the reference server's)
 * before the 200. No signature check and no validation: the least one commit per request can cost. Prints
 * `LISTENING <port>`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import postgres from "postgres";

interface Delivery {
  entry?: { changes?: { value?: { messages?: { id?: string }[] } }[] }[];
}

const sql = postgres(process.env.DATABASE_URL ?? "", { max: 10, onnotice: () => {} });
await sql`CREATE TABLE IF NOT EXISTS bench_insert_per_request (message_id text PRIMARY KEY, message jsonb NOT NULL)`;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    const id = (JSON.parse(text) as Delivery).entry?.[0]?.changes?.[0]?.value?.messages?.[0]?.id ?? "";
    sql`INSERT INTO bench_insert_per_request (message_id, message) VALUES (${id}, ${text}::jsonb)
        ON CONFLICT DO NOTHING`.then(
      () => {
        response.writeHead(200, { "content-type": "application/json" }).end('{"status":"accepted"}');
      },
      () => {
        response.writeHead(503, { "content-type": "application/json" }).end('{"status":"unavailable"}');
      },
    );
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`LISTENING ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => {
  server.close();
  void sql.end({ timeout: 1 }).then(() => process.exit(0));
});
