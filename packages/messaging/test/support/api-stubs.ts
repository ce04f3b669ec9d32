import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local HTTP servers on 127.0.0.1 standing in for the chat products' APIs (Graph, Slack Web API, Telegram
 * Bot API). Each records every request and answers like the real API; `answer` makes it answer an error,
 * a rate limit with its retry hint, or hang.
 */

/** What a stand-in answers: a status (the API's own body for it), or a status with body and headers. */
export type StubAnswer =
  | number
  | "hang"
  | { status: number; body?: unknown; headers?: Record<string, string> };

/** One request a stand-in received. */
export interface StubRequest<Body> {
  method: string;
  path: string;
  authorization: string | undefined;
  headers: IncomingHttpHeaders;
  body: Body;
  /** The status the stub answered with; 0 while it hangs. */
  status: number;
  /** Whether the API accepted it (2xx, and for Slack `ok: true`): a reply the person would see. */
  delivered: boolean;
  /** When it arrived (ms since the epoch), to check retry hints were honoured. */
  at: number;
}

export interface ApiStub<Body> {
  url: string;
  requests: StubRequest<Body>[];
  /** Requests the API accepted, i.e. replies the chat product would have delivered. */
  accepted(): StubRequest<Body>[];
  /** Decides how each request is answered (default: success). */
  answer: (request: Omit<StubRequest<Body>, "status" | "delivered">, index: number) => StubAnswer;
  close(): Promise<void>;
}

/** How one API shapes its answers: the body for a success, and the body for an error status. */
interface ApiShape<Body> {
  success(body: Body, counter: number): unknown;
  failure(status: number): unknown;
}

async function startApiStub<Body>(shape: ApiShape<Body>): Promise<ApiStub<Body>> {
  let counter = 0;
  const stub: ApiStub<Body> = {
    url: "",
    requests: [],
    accepted: () => stub.requests.filter((request) => request.delivered),
    answer: () => 200,
    close: () => closeServer(server),
  };
  const server: Server = createServer(async (req, res) => {
    const text = await readText(req);
    let body = {} as Body;
    try {
      body = JSON.parse(text) as Body;
    } catch {
      // recorded with an empty body; the assertion on the body will say what went wrong
    }
    const partial = {
      method: req.method ?? "",
      path: req.url ?? "",
      authorization: req.headers.authorization,
      headers: req.headers,
      body,
      at: Date.now(),
    };
    const answer = stub.answer(partial, stub.requests.length);
    if (answer === "hang") {
      stub.requests.push({ ...partial, status: 0, delivered: false });
      return;
    }
    const { status, headers = {} } = typeof answer === "number" ? { status: answer } : answer;
    let reply = typeof answer === "object" && "body" in answer ? answer.body : undefined;
    if (reply === undefined) {
      if (status < 300) counter++;
      reply = status < 300 ? shape.success(body, counter) : shape.failure(status);
    }
    const delivered = status < 300 && (reply as { ok?: unknown }).ok !== false;
    stub.requests.push({ ...partial, status, delivered });
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(reply));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

/** The body of a Graph API `POST /{phone_number_id}/messages`. */
export interface GraphBody {
  messaging_product?: string;
  to?: string;
  /** A business-scoped user id, where the reply goes to a user without a known phone number. */
  recipient?: string;
  type?: string;
  text?: { body?: string };
}
export type GraphRequest = StubRequest<GraphBody>;
export type GraphStub = ApiStub<GraphBody>;

export function startGraphStub(): Promise<GraphStub> {
  return startApiStub<GraphBody>({
    success: (body, counter) => ({
      messaging_product: "whatsapp",
      contacts: [{ input: body.to, wa_id: body.to }],
      messages: [{ id: `wamid.reply.${counter}` }],
    }),
    failure: (status) => ({ error: { message: `stub error ${status}`, type: "OAuthException", code: 100 } }),
  });
}

/** The body of a Slack Web API `POST /chat.postMessage`. */
export interface SlackBody {
  channel?: string;
  text?: string;
  thread_ts?: string;
}
export type SlackStub = ApiStub<SlackBody>;

/** Slack answers HTTP 200 `{ok: true}`; errors are `{ok: false, error}` (429 carries Retry-After). */
export function startSlackStub(): Promise<SlackStub> {
  return startApiStub<SlackBody>({
    success: (body, counter) => ({ ok: true, channel: body.channel, ts: `1700000000.${counter}` }),
    failure: (status) => ({ ok: false, error: status === 429 ? "ratelimited" : `stub_error_${status}` }),
  });
}

/** The body of a Telegram Bot API `POST /bot<token>/sendMessage`. */
export interface TelegramBody {
  chat_id?: string | number;
  text?: string;
}
export type TelegramStub = ApiStub<TelegramBody>;

/** The Bot API answers `{ok: true, result}`; errors are `{ok: false, error_code, description, parameters?}`. */
export function startTelegramStub(): Promise<TelegramStub> {
  return startApiStub<TelegramBody>({
    success: (body, counter) => ({ ok: true, result: { message_id: counter, chat: { id: body.chat_id } } }),
    failure: (status) => ({
      ok: false,
      error_code: status,
      description: status === 403 ? "Forbidden: bot was blocked by the user" : `Stub error ${status}`,
      ...(status === 429 ? { parameters: { retry_after: 1 } } : {}),
    }),
  });
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
