import { execFile, execFileSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { postJson, retryAfterMs } from "../channels/send.js";
import { HttpPostError, httpPost, MAX_ANSWER_HEADER_BYTES } from "./http-post.js";

// Real servers on 127.0.0.1: node:http where an ordinary server is meant, raw TCP where the answer must be broken in
// ways an HTTP server library would not produce.

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => {
      (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }),
  );
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

/** An HTTP server that counts the TCP connections it accepted. */
async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => handler(req, res));
  });
  const stats = { connections: 0 };
  server.on("connection", () => stats.connections++);
  return { url: await listen(server), stats, server };
}

/** A TCP server that reads the request head and then does whatever `answer` does with the socket. */
async function rawServer(answer: (socket: Socket) => void) {
  const server = createTcpServer((socket) => {
    socket.once("data", () => answer(socket));
    socket.on("error", () => {});
  });
  const stats = { closed: 0 };
  server.on("connection", (socket) => socket.on("close", () => stats.closed++));
  return { url: await listen(server), stats };
}

const post = (url: string, timeoutMs = 2_000, maxAnswerBytes = 1024) =>
  httpPost(url, {
    headers: { "content-type": "application/json" },
    body: '{"a":1}',
    timeoutMs,
    maxAnswerBytes,
  });

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(HttpPostError);
  return error as HttpPostError;
};

describe("httpPost keeps connections alive", () => {
  it("sends sequential requests over one connection", async () => {
    const { url, stats } = await httpServer((_req, res) => res.end('{"ok":true}'));
    for (let i = 0; i < 5; i++) {
      const answer = await post(url);
      expect(answer).toMatchObject({ status: 200, complete: true });
      expect(answer.body.toString()).toBe('{"ok":true}');
    }
    expect(stats.connections).toBe(1);
  });

  it("reuses no more connections than requests in flight", async () => {
    const { url, stats } = await httpServer((_req, res) => setTimeout(() => res.end("{}"), 20));
    for (let round = 0; round < 3; round++) await Promise.all([post(url), post(url), post(url)]);
    expect(stats.connections).toBe(3);
  });

  it("opens a new connection when the server closed the idle one", async () => {
    const { url, stats, server } = await httpServer((_req, res) => res.end("{}"));
    server.keepAliveTimeout = 50;
    await post(url);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await post(url)).toMatchObject({ status: 200, complete: true });
    expect(stats.connections).toBe(2);
  });

  it("does not keep a process alive with its idle connections", async () => {
    // The CLI exits when its work is done: an idle kept-alive socket must not hold its event loop for seconds.
    const { url, server } = await httpServer((_req, res) => res.end('{"ok":true}'));
    server.keepAliveTimeout = 60_000;
    const module = new URL("./http-post.ts", import.meta.url).pathname;
    // The child prints the answer, then how long it lived after it; a ref'd idle socket keeps it IDLE_SOCKET_MS (4 s).
    const script = `import { httpPost } from ${JSON.stringify(module)};
      const answer = await httpPost(${JSON.stringify(url)}, { headers: {}, body: "{}", timeoutMs: 5000, maxAnswerBytes: 99 });
      const answeredAt = performance.now();
      process.on("exit", () => console.log(Math.round(performance.now() - answeredAt)));
      console.log(answer.status, answer.body.toString());`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { timeout: 20_000 },
    );
    const [printed, livedOnMs] = stdout.trim().split("\n");
    expect(printed).toBe('200 {"ok":true}');
    expect(Number(livedOnMs)).toBeLessThan(2_000);
  }, 25_000);
});

describe("httpPost bounds time, size and headers", () => {
  it("gives up on a server that accepts and never answers, and closes the connection", async () => {
    const { url, stats } = await rawServer(() => {});
    const error = await failure(post(url, 200));
    expect(error).toMatchObject({ reason: "unreachable", message: "no answer within 200 ms" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats.closed).toBe(1);
  });

  it("returns an answer cut short when the body drips past the deadline", async () => {
    const { url } = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
      const drip = setInterval(() => socket.writable && socket.write("1\r\nx\r\n"), 20);
      socket.on("close", () => clearInterval(drip));
    });
    const answer = await post(url, 300, 1024 * 1024);
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(false);
    expect(answer.body.toString()).toMatch(/^x+$/);
  });

  it("refuses an endless body once past the limit, without reading the rest", async () => {
    const { url, stats } = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
      const chunk = `400\r\n${"x".repeat(1024)}\r\n`;
      const flood = () => {
        while (socket.writable && socket.write(chunk)) {}
      };
      socket.on("drain", flood);
      flood();
    });
    const error = await failure(post(url, 5_000, 64 * 1024));
    expect(error).toMatchObject({ reason: "too-large", status: 200 });
    expect(error.message).toBe("answered 200 with a body over 65536 bytes");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats.closed).toBe(1);
  });

  it("refuses a declared Content-Length over the limit before reading the body", async () => {
    const { url } = await rawServer((socket) => {
      socket.write("HTTP/1.1 502 Bad Gateway\r\ncontent-length: 999999999\r\n\r\nxx");
    });
    expect(await failure(post(url, 5_000, 1024))).toMatchObject({ reason: "too-large", status: 502 });
  });

  it("takes an answer of exactly the limit", async () => {
    const { url } = await httpServer((_req, res) => res.end("y".repeat(1024)));
    expect((await post(url, 2_000, 1024)).body.byteLength).toBe(1024);
  });

  it("refuses response headers over MAX_ANSWER_HEADER_BYTES", async () => {
    const { url } = await rawServer((socket) => {
      socket.end(
        `HTTP/1.1 200 OK\r\nx-pad: ${"p".repeat(MAX_ANSWER_HEADER_BYTES)}\r\ncontent-length: 0\r\n\r\n`,
      );
    });
    expect(await failure(post(url))).toMatchObject({ reason: "unreachable" });
  });

  it("does not follow a redirect", async () => {
    const elsewhere = await httpServer((_req, res) => res.end("{}"));
    const { url } = await httpServer((_req, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/steal` });
      res.end();
    });
    expect(await post(url)).toMatchObject({ status: 307, complete: true });
    expect(elsewhere.stats.connections).toBe(0);
  });
});

describe("httpPost given up by its caller's signal", () => {
  const postWith = (url: string, signal: AbortSignal) =>
    httpPost(url, { headers: {}, body: "{}", timeoutMs: 10_000, maxAnswerBytes: 1024, signal });

  it("gives up a call the server never answers when the signal aborts, long before its timeout, and closes it", async () => {
    const { url, stats } = await rawServer(() => {});
    const started = performance.now();
    const error = await failure(postWith(url, AbortSignal.timeout(100)));
    expect(error.reason).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stats.closed).toBe(1);
  });

  it("gives up an answer whose body is still arriving: no answer rather than a cut one", async () => {
    const { url } = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n");
      const drip = setInterval(() => socket.writable && socket.write("1\r\nx\r\n"), 20);
      socket.on("close", () => clearInterval(drip));
    });
    expect((await failure(postWith(url, AbortSignal.timeout(150)))).reason).toBe("aborted");
  });

  it("sends nothing when the signal has already aborted", async () => {
    const { url, stats } = await httpServer((_, res) => res.end("{}"));
    const controller = new AbortController();
    controller.abort();
    expect((await failure(postWith(url, controller.signal))).reason).toBe("aborted");
    expect(stats.connections).toBe(0);
  });

  it("postJson turns it into a retryable DeliveryError", async () => {
    const { url } = await rawServer(() => {});
    const error = await postJson("Agent", url, {
      body: {},
      timeoutMs: 10_000,
      code: "AGENT_FAILED",
      signal: AbortSignal.timeout(50),
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "AGENT_FAILED", retryable: true });
    expect((error as Error).message).toBe("Agent call given up: the call was aborted");
  });
});

describe("httpPost on broken connections", () => {
  it("reports a connection reset before any answer as unreachable", async () => {
    const { url } = await rawServer((socket) => socket.resetAndDestroy());
    expect(await failure(post(url))).toMatchObject({ reason: "unreachable" });
  });

  it.each([
    ["reset", (socket: Socket) => socket.resetAndDestroy()],
    ["closed", (socket: Socket) => socket.end()],
  ])("returns what came, cut short, when the connection is %s mid-answer", async (_, cut) => {
    const { url } = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"ok":tr', () =>
        setTimeout(() => cut(socket), 20),
      );
    });
    const answer = await post(url);
    expect(answer).toMatchObject({ status: 200, complete: false });
    expect(answer.body.toString()).toBe('{"ok":tr');
  });

  it("refuses an https server whose certificate is not trusted, before sending anything", async (context) => {
    // A self-signed certificate made for this test: certificate checks stay on, so nothing goes to a stand-in.
    const dir = mkdtempSync(join(tmpdir(), "http-post-tls-"));
    try {
      execFileSync(
        "openssl",
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
          .concat(["-addext", "subjectAltName=IP:127.0.0.1"])
          .concat(["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]),
        { stdio: "ignore" },
      );
    } catch {
      context.skip("openssl is not installed: the TLS case is not run");
    }
    let received = 0;
    const server = createHttpsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (req, res) => {
        received++;
        req.resume();
        res.end("{}");
      },
    );
    const url = (await listen(server)).replace("http:", "https:");
    rmSync(dir, { recursive: true, force: true });
    const error = await failure(post(url));
    expect(error.reason).toBe("unreachable");
    expect(error.message).toMatch(/self[- ]signed/i);
    expect(received).toBe(0);
  });

  it("refuses a URL that is not http or https, and never names the URL", async () => {
    const error = await failure(post("file:///bot123:secret/sendMessage"));
    expect(error).toMatchObject({ reason: "invalid-request", message: "unsupported protocol file:" });
  });

  it.each(["\r\nx-injected: 1", "\n", "\0", "\u2028"])(
    "fails a header value with a control character (%j) for good, without sending it or naming the value",
    async (bad) => {
      const { url, stats } = await httpServer((_req, res) => res.end("{}"));
      const error = await postJson("Graph API", url, {
        headers: { authorization: `Bearer SECRET${bad}` },
        body: {},
        timeoutMs: 1_000,
      }).then(
        () => new Error("sent"),
        (caught: unknown) => caught as Error,
      );
      expect(error).toMatchObject({ code: "SEND_FAILED", retryable: false });
      expect(error.message).toMatch(/^Graph API request cannot be sent: .*authorization/);
      expect(error.message).not.toContain("SECRET");
      expect(stats.connections).toBe(0);
    },
  );
});

describe("postJson over httpPost", () => {
  it("names the API and never the URL or its token when the API is unreachable", async () => {
    const { url } = await rawServer((socket) => socket.resetAndDestroy());
    const error = await postJson("Telegram Bot API", `${url}/bot123:SECRET/sendMessage`, {
      body: {},
      timeoutMs: 1_000,
    }).then(
      () => new Error("answered"),
      (caught: unknown) => caught as Error,
    );
    expect(error).toMatchObject({ code: "SEND_FAILED", retryable: true });
    expect(error.message).toMatch(/^Telegram Bot API unreachable: /);
    expect(error.message).not.toMatch(/SECRET|bot123/);
  });

  it("reads Retry-After in seconds and as an HTTP date, bounded to a day", async () => {
    let header = "";
    const { url } = await httpServer((_req, res) => {
      res.writeHead(429, { "retry-after": header });
      res.end("{}");
    });
    const hint = async (value: string) => {
      header = value;
      return (await postJson("API", url, { body: {}, timeoutMs: 1_000 })).retryAfterMs;
    };
    expect(await hint("7")).toBe(7_000);
    expect(await hint("999999999")).toBe(86_400_000);
    expect(await hint("soon")).toBeUndefined();
    expect(await hint("-5")).toBeUndefined();
    const date = (await hint(new Date(Date.now() + 60_000).toUTCString())) ?? 0;
    expect(date).toBeGreaterThan(50_000);
    expect(date).toBeLessThanOrEqual(60_000);
    expect(retryAfterMs("Thu, 01 Jan 1970 00:00:00 GMT")).toBe(0);
    expect(retryAfterMs("Tue, 31 Dec 2999 00:00:00 GMT")).toBe(86_400_000);
  });
});
