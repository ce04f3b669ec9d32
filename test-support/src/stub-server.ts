import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the stub received, its body read whole. */
export interface StubRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What the stub answers. A non-string body is sent as JSON; `chunked` sends it in two writes, no length. */
export interface StubAnswer {
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  readonly chunked?: boolean;
}

/** A stand-in for a JSON API (a JWKS endpoint, a chat API, an agent) on 127.0.0.1, on a random port. */
export interface StubServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  /** Every request received so far, oldest first. */
  readonly requests: StubRequest[];
  /** The answer to the next requests; a function answers each request from what it asked. */
  answer: StubAnswer | ((request: StubRequest) => StubAnswer);
  close(): Promise<void>;
}

export async function startStubServer(answer: StubServer["answer"] = { body: {} }): Promise<StubServer> {
  const requests: StubRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(request);
      const reply = typeof stub.answer === "function" ? stub.answer(request) : stub.answer;
      const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {});
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      if (reply.chunked) {
        const half = Math.floor(text.length / 2);
        res.write(text.slice(0, half));
        res.end(text.slice(half));
      } else {
        res.end(text);
      }
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const stub: StubServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
  return stub;
}
