import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the stand-in Graph API received. */
export interface GraphRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: {
    messaging_product?: string;
    to?: string;
    type?: string;
    text?: { body?: string };
  };
  /** The status the stub answered with; 0 while it hangs. */
  status: number;
}

/**
 * A local HTTP server standing in for the Graph API: it records every request and answers 200 with a
 * message id, unless `answer` says otherwise for a request.
 */
export interface GraphStub {
  url: string;
  requests: GraphRequest[];
  /** Requests that were answered 2xx, i.e. replies WhatsApp would have delivered. */
  accepted(): GraphRequest[];
  /** Decides the status of each request (default 200); "hang" never answers (until close()). */
  answer: (request: Omit<GraphRequest, "status">, index: number) => number | "hang";
  close(): Promise<void>;
}

export async function startGraphStub(): Promise<GraphStub> {
  let counter = 0;
  const stub: GraphStub = {
    url: "",
    requests: [],
    accepted: () => stub.requests.filter((request) => request.status < 300),
    answer: () => 200,
    close: () => closeServer(server),
  };
  const server: Server = createServer(async (req, res) => {
    const text = await readText(req);
    let body: GraphRequest["body"] = {};
    try {
      body = JSON.parse(text) as GraphRequest["body"];
    } catch {
      // recorded with an empty body; the assertion on the body will say what went wrong
    }
    const partial = {
      method: req.method ?? "",
      path: req.url ?? "",
      authorization: req.headers.authorization,
      body,
    };
    const answer = stub.answer(partial, stub.requests.length);
    const status = answer === "hang" ? 0 : answer;
    stub.requests.push({ ...partial, status });
    if (answer === "hang") return;
    res.writeHead(status, { "content-type": "application/json" });
    if (status < 300) {
      counter++;
      res.end(
        JSON.stringify({
          messaging_product: "whatsapp",
          contacts: [{ input: body.to, wa_id: body.to }],
          messages: [{ id: `wamid.reply.${counter}` }],
        }),
      );
    } else {
      res.end(
        JSON.stringify({ error: { message: `stub error ${status}`, type: "OAuthException", code: 100 } }),
      );
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
