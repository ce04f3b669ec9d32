import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentMessage } from "@agent-platform/messaging";
import { closeServer, readText } from "./graph-stub.js";

/** A local agent runtime for AGENT_URL: records what it is sent and answers `{text: "agent: <text>"}`. */
export interface AgentStub {
  url: string;
  received: AgentMessage[];
  /** The calls `hold` kept open, each with when (performance.now()) the caller closed it, once it has. */
  held: { closedAt: number | undefined }[];
  close(): Promise<void>;
}

/** `hold(index)` true: the call of that index (0 first) is never answered, like an agent that hangs. */
export async function startAgentStub(
  options: { hold?: (index: number) => boolean } = {},
): Promise<AgentStub> {
  const stub: AgentStub = { url: "", received: [], held: [], close: () => closeServer(server) };
  const server: Server = createServer(async (req, res) => {
    const message = JSON.parse(await readText(req)) as AgentMessage;
    const index = stub.received.length;
    stub.received.push(message);
    if (options.hold?.(index)) {
      const held: { closedAt: number | undefined } = { closedAt: undefined };
      stub.held.push(held);
      res.on("close", () => {
        held.closedAt = performance.now();
      });
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ text: `agent: ${message.text}` }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/answer`;
  return stub;
}
