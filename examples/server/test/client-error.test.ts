import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINGER_BYTES } from "../src/http/client-error.js";
import { startTestServer, type TestServer } from "./helpers.js";

/**
 * Sends raw bytes (then `more`, if given, as the client's remaining upload) and reads until the server
 * closes the connection. A reset rejects: the client would have lost the answer.
 */
function exchange(
  server: TestServer,
  bytes: string,
  more?: Buffer,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    if (more !== undefined) socket.on("connect", () => socket.end(more));
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      resolve({
        status: Number(text.slice(9, 12)),
        headers: text.slice(0, split),
        body: text.slice(split + 4),
      });
    });
    socket.write(bytes);
  });
}

/**
 * `exchange` on a kept-alive connection: a `GET /health` first, its whole answer read, then `bytes` (and `more`)
 * on the same socket; what follows the first answer is returned.
 */
function afterOneAnswer(
  server: TestServer,
  bytes: string,
  more?: Buffer,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let firstEnd = -1;
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (firstEnd >= 0) return;
      const text = received.toString("latin1");
      const split = text.indexOf("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(text);
      if (split < 0 || length === null || received.length < split + 4 + Number(length[1])) return;
      firstEnd = split + 4 + Number(length[1]);
      socket.write(bytes);
      if (more !== undefined) socket.end(more);
    });
    socket.on("close", () => {
      const text = received.subarray(Math.max(firstEnd, 0)).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      resolve({
        status: Number(text.slice(9, 12)),
        headers: text.slice(0, split),
        body: text.slice(split + 4),
      });
    });
    socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  });
}

describe("requests Node's HTTP parser refuses answer with the JSON error body", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it("431 for a 20,000-character query", async () => {
    const result = await exchange(server, `GET /health?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(result.status).toBe(431);
    expect(result.headers).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(result.body)).toEqual({
      detail:
        "Request header fields too large: the request line and headers together exceed the server's limit",
      error_code: "REQUEST_HEADER_FIELDS_TOO_LARGE",
    });
  });

  it("400 for a malformed request line", async () => {
    const result = await exchange(server, "NOT AN HTTP REQUEST\r\n\r\n");
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body)).toEqual({ detail: "Malformed HTTP request", error_code: "BAD_REQUEST" });
  });

  it("413 for oversized chunk extensions", async () => {
    const result = await exchange(
      server,
      `POST /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${"e".repeat(20_000)}\r\na\r\n0\r\n\r\n`,
    );
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body)).toMatchObject({ error_code: "PAYLOAD_TOO_LARGE" });
  });

  const HEADERS_TOO_LARGE = {
    detail:
      "Request header fields too large: the request line and headers together exceed the server's limit",
    error_code: "REQUEST_HEADER_FIELDS_TOO_LARGE",
  };

  it("fetch of a 20,000-character query gets the 431 and its body, not a closed socket", async () => {
    for (const method of ["GET", "POST", "DELETE", "OPTIONS"]) {
      const response = await fetch(`${server.url}/health?q=${"a".repeat(20_000)}`, {
        method,
        ...(method === "POST" ? { body: "x".repeat(200_000) } : {}),
      });
      expect(response.status).toBe(431);
      expect(await response.json()).toEqual(HEADERS_TOO_LARGE);
    }
    const headers = await fetch(`${server.url}/health`, { headers: { "x-big": "b".repeat(40_000) } });
    expect(headers.status).toBe(431);
  });

  it("200 requests with a 20,000-character query, 20 at a time, each get the whole 431 JSON body", async () => {
    // Raw sockets, each read until the server closes: a reset or an early close shows as a short answer here,
    // as "other side closed" in fetch. Every method, with and without a body still being uploaded, and every
    // other one on a kept-alive connection that has answered a request before (as fetch reuses one).
    const methods = ["GET", "POST", "PUT", "DELETE", "OPTIONS"];
    const failures: string[] = [];
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const method = methods[(round * 20 + i) % methods.length] as string;
          const upload = method === "POST" || method === "PUT";
          const head = `${method} /health?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n${upload ? "Content-Length: 50000\r\n" : ""}\r\n`;
          try {
            const more = upload ? Buffer.alloc(50_000, "z") : undefined;
            const result =
              i % 2 === 0 ? await exchange(server, head, more) : await afterOneAnswer(server, head, more);
            if (result.status !== 431 || result.body !== JSON.stringify(HEADERS_TOO_LARGE)) {
              failures.push(`${method}: ${result.status} ${JSON.stringify(result.body.slice(0, 80))}`);
            }
          } catch (error) {
            failures.push(`${method}: ${(error as Error).message}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
  });

  it("a client still uploading after the refusal gets it, over a raw socket", async () => {
    const line = `POST /health?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\nContent-Length: 500000\r\n\r\n`;
    const result = await exchange(server, line, Buffer.alloc(500_000, "z"));
    expect(result.status).toBe(431);
    expect(JSON.parse(result.body)).toEqual(HEADERS_TOO_LARGE);
    // A malformed request followed by more bytes, too.
    const malformed = await exchange(server, "NOT AN HTTP REQUEST\r\n\r\n", Buffer.alloc(100_000, "z"));
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ error_code: "BAD_REQUEST" });
  });

  it("a client that reads its answer only after uploading the rest still gets it (no reset)", async () => {
    // The request arrives in parts: the server refuses on the first and must keep reading the later ones; a
    // server that closes makes the kernel answer them with a reset, and the client's upload fails.
    const socket = connect(server.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let failure: Error | undefined;
    socket.on("error", (error) => {
      failure = error;
    });
    await new Promise((resolve) => socket.on("connect", resolve));
    socket.pause();
    socket.write(`POST /health?q=${"a".repeat(20_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.write(`${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n`);
    for (let part = 0; part < 5; part++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.write(Buffer.alloc(20_000, "z"));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.resume();
    socket.end();
    await new Promise((resolve) => {
      socket.on("close", resolve);
      socket.on("error", resolve);
    });
    expect(failure).toBeUndefined();
    const text = Buffer.concat(chunks).toString();
    expect(text).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual(HEADERS_TOO_LARGE);
  });

  it("what is read after a refusal is bounded in bytes and in time", async () => {
    const socket = connect(server.port, "127.0.0.1");
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    socket.on("error", () => {}); // the server cuts the endless upload: a reset is expected here
    const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, "z");
    socket.write(`GET /?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const pump = () => {
      while (!socket.destroyed && sent < 20 * LINGER_BYTES) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
    };
    pump();
    await closed;
    expect(received).toContain("431");
    expect(sent).toBeLessThan(20 * LINGER_BYTES);

    // A client that trickles bytes and never closes its side: after a while the server stops reading, and the
    // next write fails.
    const slow = connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true });
    let answer = "";
    slow.on("data", (data) => {
      answer += data.toString();
    });
    slow.write(`GET /?q=${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const cut = new Promise<void>((resolve) => slow.on("error", () => resolve()));
    const trickle = setInterval(() => slow.write("z"), 50);
    await cut;
    clearInterval(trickle);
    slow.destroy();
    expect(answer).toContain("431");
  });

  it("the server keeps serving", async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});

const HOST_LINES = "GET /health HTTP/1.1\r\n";

describe("requests HTTP forbids but Node's parser lets through are refused before routing, with the JSON body", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  const badRequest = (detail: string) => ({ detail, error_code: "BAD_REQUEST" });

  it("two Host headers, for every method and spelling (RFC 9112 §3.2)", async () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "get"]) {
      for (const hosts of [
        ["Host: a", "Host: b"],
        ["Host: x", "Host: x"],
        ["Host: x", "hOST: x"],
        ["host:", "Host: x"],
      ]) {
        // A protected route: a request that reached routing would be answered 401.
        const result = await exchange(
          server,
          `${method} /databases/default/migrations HTTP/1.1\r\n${hosts.join("\r\n")}\r\nContent-Length: 0\r\n\r\n`,
        );
        expect(result.status, `${method} ${hosts}`).toBe(400);
        // Node's parser refuses methods it does not know before any header is looked at.
        const detail = ["FOO", "get"].includes(method)
          ? "Malformed HTTP request"
          : "More than one Host header";
        expect(JSON.parse(result.body), `${method} ${hosts}`).toEqual(badRequest(detail));
      }
    }
    const head = await exchange(server, "HEAD /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    expect(head.status).toBe(400);
  });

  it("a missing Host on HTTP/1.1 and an invalid one; HTTP/1.0 may omit it", async () => {
    const missing = await exchange(server, `${HOST_LINES}Connection: close\r\n\r\n`);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body)).toEqual(badRequest("Missing Host header"));
    for (const host of ["a b", "u@a", "a/b", "a\tb", "a, b", "a:b", "[zz]", "a?b", "a#b", "é.example"]) {
      const result = await exchange(server, `${HOST_LINES}Host: ${host}\r\nConnection: close\r\n\r\n`);
      expect(result.status, host).toBe(400);
      expect(JSON.parse(result.body), host).toEqual(
        badRequest("Invalid Host header: not a host and optional port"),
      );
    }
    for (const host of ["localhost", "localhost:7777", "127.0.0.1:1", "[::1]:8080", "a-b.example", ""]) {
      const result = await exchange(server, `${HOST_LINES}Host: ${host}\r\nConnection: close\r\n\r\n`);
      expect(result.status, host).toBe(200);
    }
    const http10 = await exchange(server, "GET /health HTTP/1.0\r\n\r\n");
    expect(http10.status).toBe(200);
  });

  it("two Content-Type headers", async () => {
    const result = await exchange(
      server,
      "POST /health HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body)).toEqual(badRequest("More than one Content-Type header"));
  });

  it("ambiguous body framing: repeated Content-Length, Content-Length with Transfer-Encoding, other codings", async () => {
    const post = "POST /health HTTP/1.1\r\nHost: x\r\n";
    for (const [framing, body] of [
      ["Content-Length: 1\r\nContent-Length: 1", "x"],
      ["Content-Length: 1\r\nContent-Length: 2", "xx"],
      ["Content-Length: 1, 1", "x"],
      ["Content-Length: +1", "x"],
      ["Transfer-Encoding: chunked\r\nContent-Length: 3", "0\r\n\r\n"],
      ["Content-Length: 3\r\nTransfer-Encoding: chunked", "0\r\n\r\n"],
      ["Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "0\r\n\r\n"],
      ["Transfer-Encoding: chunked, gzip", ""],
      ["Transfer-Encoding: gzip", ""],
      ["Transfer-Encoding: gzip, chunked", "0\r\n\r\n"],
      ["Transfer-Encoding: identity", ""],
    ] as const) {
      const result = await exchange(server, `${post}${framing}\r\nConnection: close\r\n\r\n${body}`);
      expect(result.status, framing).toBe(400);
      expect(JSON.parse(result.body), framing).toMatchObject({ error_code: "BAD_REQUEST" });
    }
  });

  it("a request target @hono/node-server cannot parse (a backslash in the path)", async () => {
    const result = await exchange(server, "GET /a\\b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(result.status).toBe(400);
    expect(JSON.parse(result.body)).toEqual(badRequest("Malformed HTTP request"));
  });

  it("the server keeps serving, and a well-formed request is unaffected", async () => {
    const result = await exchange(server, `${HOST_LINES}Host: x\r\nConnection: close\r\n\r\n`);
    expect(result.status).toBe(200);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
