import { createHmac } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { nodeHeaderReader, SILENT_LOGGER } from "@agent-platform/common/internal";
import { type ServerType, serve } from "@hono/node-server";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BodyBudget } from "./body-budget.js";
import { createWhatsAppChannel } from "./channels/whatsapp/channel.js";
import type { InboxStore } from "./inbox/store.js";
import { handleWebhook, readWebhookRequest } from "./webhook.js";

// The reader over Node's rawHeaders must answer every lookup exactly as the WHATWG `Headers` that
// @hono/node-server builds for `c.req.raw.headers`, or a delivery could be accepted on one path and
// refused on the other. Requests are written to a raw socket so that headers can be repeated, mixed in
// case and padded, which no HTTP client sends.

const SECRET = "app-secret";
const BODY = '{"object":"whatsapp_business_account","entry":[]}';
const SIGNATURE = `sha256=${createHmac("sha256", SECRET).update(BODY).digest("hex")}`;
const NAMES = [
  "x-hub-signature-256",
  "x-slack-signature",
  "x-slack-request-timestamp",
  "x-telegram-bot-api-secret-token",
  "content-length",
  "content-type",
  "authorization",
  "cookie",
  "x-empty",
  "x-absent",
];

interface Seen {
  fetchHeaders: Record<string, string | null>;
  nodeHeaders: Record<string, string | null>;
  /** The webhook's answer on each path: over the adapter's `Headers`, and over the Node reader. */
  viaFetchHeaders: number;
  viaNodeHeaders: number;
}

const channel = createWhatsAppChannel({
  verifyToken: "v",
  appSecret: SECRET,
  accessToken: "a",
  phoneNumberId: "1",
  apiBaseUrl: "http://127.0.0.1:9",
  apiTimeoutMs: 1_000,
});
const store = { insert: async () => ({ received: 0, duplicates: 0 }) } as unknown as InboxStore;
const deps = { channel, store, logger: SILENT_LOGGER, onStored() {} };

let server: ServerType;
let port: number;
let seen: Seen | undefined;

beforeAll(async () => {
  const app = new Hono<{ Bindings: { incoming: IncomingMessage } }>();
  app.post("/webhook", async (c) => {
    const reader = nodeHeaderReader(c.env.incoming);
    const fetchHeaders: Record<string, string | null> = {};
    const nodeHeaders: Record<string, string | null> = {};
    for (const name of NAMES) {
      fetchHeaders[name] = c.req.raw.headers.get(name);
      nodeHeaders[name] = reader.get(name);
    }
    // The body is read from Node (readWebhookRequest with `incoming`); the Fetch path reuses it.
    const viaNode = await readWebhookRequest(
      c.req.raw,
      { maxBytes: 1024, timeoutMs: 1_000, idleTimeoutMs: 1_000, charge: new BodyBudget(4096).open() },
      c.env.incoming,
    );
    const viaFetch = { ...viaNode, headers: c.req.raw.headers };
    seen = {
      fetchHeaders,
      nodeHeaders,
      viaFetchHeaders: (await handleWebhook(deps, viaFetch)).status,
      viaNodeHeaders: (await handleWebhook(deps, viaNode)).status,
    };
    return c.text("ok");
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends `headerLines` (already formatted, CRLF added here) and BODY over a raw socket. */
async function post(headerLines: string[]): Promise<Seen> {
  seen = undefined;
  const socket = connect(port, "127.0.0.1");
  await once(socket, "connect");
  const lines = ["POST /webhook HTTP/1.1", "Host: 127.0.0.1", "Connection: close", ...headerLines];
  // Written, not ended: the server closes after answering (Connection: close); a half-closed socket
  // could make it drop the request before the handler has answered.
  socket.write(`${lines.join("\r\n")}\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`);
  let answer = "";
  for await (const chunk of socket) answer += String(chunk);
  expect(answer).toMatch(/^HTTP\/1\.1 200/);
  if (seen === undefined) throw new Error("the handler did not run");
  return seen;
}

describe("nodeHeaderReader answers as the adapter's Headers", () => {
  it.each<[string, string[]]>([
    ["one signature", [`X-Hub-Signature-256: ${SIGNATURE}`]],
    [
      "a duplicated signature (both right)",
      [`X-Hub-Signature-256: ${SIGNATURE}`, `x-hub-signature-256: ${SIGNATURE}`],
    ],
    [
      "a duplicated signature (wrong, then right)",
      [`x-hub-signature-256: sha256=${"0".repeat(64)}`, `x-hub-signature-256: ${SIGNATURE}`],
    ],
    ["a signature padded with whitespace", [`x-hub-signature-256: \t ${SIGNATURE} \t `]],
    ["an empty signature, repeated", ["x-hub-signature-256:", "X-HUB-SIGNATURE-256: "]],
    [
      "headers Node keeps only the first of",
      ["Content-Type: application/json", "content-type: text/plain", "Authorization: a", "authorization: b"],
    ],
    ["cookies and empty values", ["Cookie: a=1", "cookie: b=2", "x-empty:", "X-Empty: "]],
    [
      "Slack's and Telegram's headers, repeated",
      [
        "X-Slack-Signature: v0=1",
        "x-slack-signature: v0=2",
        "X-Slack-Request-Timestamp: 1",
        "X-Telegram-Bot-Api-Secret-Token: t",
        "x-telegram-bot-api-secret-token: u",
      ],
    ],
  ])("%s", async (_label, headerLines) => {
    const result = await post(headerLines);
    expect(result.nodeHeaders).toEqual(result.fetchHeaders);
    expect(result.viaNodeHeaders).toBe(result.viaFetchHeaders);
  });

  it("accepts one right signature and refuses it sent twice, on both paths", async () => {
    const once = await post([`x-hub-signature-256: ${SIGNATURE}`]);
    expect([once.viaFetchHeaders, once.viaNodeHeaders]).toEqual([200, 200]);
    const twice = await post([`x-hub-signature-256: ${SIGNATURE}`, `x-hub-signature-256: ${SIGNATURE}`]);
    // Headers.get joins the two ("sha256=…, sha256=…"), which is not a signature.
    expect(twice.nodeHeaders["x-hub-signature-256"]).toBe(`${SIGNATURE}, ${SIGNATURE}`);
    expect([twice.viaFetchHeaders, twice.viaNodeHeaders]).toEqual([403, 403]);
  });
});

describe("nodeHeaderReader on its own", () => {
  it("looks names up case-insensitively, skips pseudo-headers and strips whitespace as Headers does", () => {
    const rawHeaders = [":path", "/x", "X-A", " \t1\r\n", "x-a", "2", "x-b", ""];
    const reader = nodeHeaderReader({ rawHeaders });
    const headers = new Headers([
      ["X-A", " \t1"],
      ["x-a", "2"],
      ["x-b", ""],
    ]);
    for (const name of ["x-a", "X-A", "x-b", "x-c"]) expect(reader.get(name)).toBe(headers.get(name));
    expect(reader.get(":path")).toBeNull();
  });
});
