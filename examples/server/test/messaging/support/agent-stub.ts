import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentMessage } from "@agent-platform/messaging";
import { closeServer, readText } from "./graph-stub.js";

/** A local agent runtime for AGENT_URL: records what it is sent and answers `{text: "agent: <text>"}`. */
export interface AgentStub {
  url: string;
  received: AgentMessage[];
  close(): Promise<void>;
}

export async function startAgentStub(): Promise<AgentStub> {
  const stub: AgentStub = { url: "", received: [], close: () => closeServer(server) };
  const server: Server = createServer(async (req, res) => {
    const message = JSON.parse(await readText(req)) as AgentMessage;
    stub.received.push(message);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ text: `agent: ${message.text}` }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/answer`;
  return stub;
}
