/**
 * A chat product's API (replies) or an agent runtime, standing in for the real one in a process of its own:
 * `node --import tsx stand-in.ts chat-api|agent`. In the bench process it starved behind the load generator:
 * connections waited seconds to be accepted, so replies the workers had sent timed out at them and were sent
 * again, which the bench then counted as answered twice. Prints `LISTENING <port>`.
 *
 * It records when each message id arrived (epoch ms, `performance.timeOrigin + performance.now()`, comparable
 * across processes) and who sent it (the bearer token, which the bench sets per server process), and answers as
 * the real one would. The echo agent replies with the message's text, which the bench sets to the message id,
 * so each reply names its message. `GET /arrivals` answers the record so far:
 * `{ "<id>": [[at, sender], ...] }`; `GET /arrivals?count` only how many ids have arrived.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type Arrivals = Record<string, [at: number, sender: string][]>;

const kind = process.argv[2];
if (kind !== "chat-api" && kind !== "agent") throw new Error("usage: stand-in.ts chat-api|agent");
const arrivals: Arrivals = {};
let ids = 0;

const server = createServer((request, response) => {
  if (request.method === "GET") {
    const body = request.url?.endsWith("?count") ? String(ids) : JSON.stringify(arrivals);
    response.writeHead(200, { "content-type": "application/json" }).end(body);
    return;
  }
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    const at = performance.timeOrigin + performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { text?: string | { body?: string } };
    const id = typeof body.text === "string" ? body.text : (body.text?.body ?? "");
    const record = arrivals[id] ?? [];
    if (record.length === 0) ids++;
    record.push([at, request.headers.authorization ?? ""]);
    arrivals[id] = record;
    response.writeHead(200, { "content-type": "application/json" });
    response.end(kind === "agent" ? JSON.stringify({ text: id }) : '{"messages":[{"id":"wamid.reply"}]}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => console.log(`LISTENING ${(server.address() as AddressInfo).port}`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
