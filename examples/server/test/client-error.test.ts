import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.js";

/** Sends raw bytes and reads until the server closes the connection. */
function exchange(
  server: TestServer,
  bytes: string,
): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
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

  it("the server keeps serving", async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});
