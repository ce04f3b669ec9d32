import { readStreamWithin } from "@agent-platform/common/internal";

/** Limits of every outbound request this package makes (JWKS, discovery). */
export interface FetchLimits {
  /** The whole exchange, redirects and body included. */
  readonly timeoutMs: number;
  /** Largest accepted body, enforced while reading. */
  readonly maxBytes: number;
}

export type RemoteFetchFailure = "timeout" | "network" | "status" | "too_large" | "redirect" | "not_json";

/** Why a remote document could not be used. The message names the URL's origin and path, never its body. */
export class RemoteFetchError extends Error {
  override readonly name = "RemoteFetchError";
  readonly failure: RemoteFetchFailure;
  constructor(failure: RemoteFetchFailure, message: string) {
    super(message);
    this.failure = failure;
  }
}

/** A same-origin redirect (a moved path on the identity provider) is followed once; a second is refused. */
const MAX_REDIRECTS = 1;
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** https anywhere; plain http only to the local machine (development, tests). */
export function isAllowedRemoteUrl(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname));
}

/** The URL as it may appear in a log line: no credentials, query or fragment (they may carry secrets). */
export function describeUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * A redirect is followed only within the origin (scheme, host and port) of the configured URL: that URL is
 * the trust anchor, so a redirect on the identity provider's host cannot move the keys to another host, port
 * or scheme (as jose, which follows none).
 */
function redirectAllowed(from: URL, to: URL): boolean {
  return to.origin === from.origin;
}

export async function readBounded(response: Response, limits: FetchLimits, where: string): Promise<string> {
  const tooLarge = () =>
    new RemoteFetchError("too_large", `${where}: response larger than ${limits.maxBytes} bytes`);
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (declared > limits.maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  if (response.body === null) return "";
  const bytes = await readStreamWithin(response.body, limits.maxBytes);
  if (bytes === null) throw tooLarge();
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RemoteFetchError("not_json", `${where}: response is not UTF-8`);
  }
}

/**
 * GETs a JSON document with the global `fetch`: one timeout over the whole exchange, a size cap
 * enforced while streaming, redirects followed by hand (at most one, same-origin, see `redirectAllowed`).
 */
export async function fetchJson(
  url: URL,
  limits: FetchLimits,
): Promise<{ value: unknown; headers: Headers }> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const where = describeUrl(current);
    try {
      const response = await fetch(current, {
        signal,
        redirect: "manual",
        headers: { accept: "application/json" },
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        const next = new URL(location, current);
        if (redirects >= MAX_REDIRECTS || !redirectAllowed(current, next)) {
          throw new RemoteFetchError("redirect", `${where}: redirect refused (${describeUrl(next)})`);
        }
        current = next;
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new RemoteFetchError("status", `${where}: HTTP ${response.status}`);
      }
      const text = await readBounded(response, limits, where);
      try {
        return { value: JSON.parse(text), headers: response.headers };
      } catch {
        throw new RemoteFetchError("not_json", `${where}: response is not JSON`);
      }
    } catch (error) {
      if (error instanceof RemoteFetchError) throw error;
      if (signal.aborted) {
        throw new RemoteFetchError("timeout", `${where}: no complete answer within ${limits.timeoutMs} ms`);
      }
      throw new RemoteFetchError("network", `${where}: request failed`);
    }
  }
}
