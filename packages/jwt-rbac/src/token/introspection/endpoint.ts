import { discoveryUrl } from "../keys/discovery.js";
import {
  describeUrl,
  type FetchLimits,
  fetchJson,
  isAllowedRemoteUrl,
  RemoteFetchError,
  readBounded,
} from "../keys/fetch-json.js";
import { authenticateClient } from "./client-auth.js";
import type { ClientAuth } from "./options.js";

/** An introspection answer: the token's claims when active, `undefined` when not. */
export type IntrospectionAnswer = Record<string, unknown> | undefined;

/**
 * POSTs the token (RFC 7662 §2.1) with the client's credentials. Redirects are never followed (a
 * redirected POST would carry the token and the credentials elsewhere); one timeout over the exchange;
 * the body bounded while read. Anything but a 200 JSON object is a failure, thrown as a RemoteFetchError.
 */
export async function introspect(
  endpoint: URL,
  token: string,
  auth: ClientAuth,
  limits: FetchLimits,
): Promise<IntrospectionAnswer> {
  const where = describeUrl(endpoint);
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/x-www-form-urlencoded",
  };
  const form = new URLSearchParams({ token, token_type_hint: "access_token" });
  await authenticateClient(auth, endpoint, headers, form);
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let text: string;
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers,
      body: form.toString(),
      redirect: "manual",
      signal,
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new RemoteFetchError("status", `${where}: HTTP ${response.status}`);
    }
    text = await readBounded(response, limits, where);
  } catch (error) {
    if (error instanceof RemoteFetchError) throw error;
    if (signal.aborted)
      throw new RemoteFetchError("timeout", `${where}: no complete answer within ${limits.timeoutMs} ms`);
    throw new RemoteFetchError("network", `${where}: request failed`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RemoteFetchError("not_json", `${where}: response is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RemoteFetchError("not_json", `${where}: response is not a JSON object`);
  }
  const { active, ...claims } = value as Record<string, unknown>;
  // Only the boolean true is active (RFC 7662 §2.2): "true", 1 or a missing member are not.
  return active === true ? claims : undefined;
}

/** The `introspection_endpoint` of an issuer's discovery document, whose `issuer` must be the one asked for. */
export async function discoverIntrospectionEndpoint(issuer: string, limits: FetchLimits): Promise<URL> {
  const url = discoveryUrl(issuer);
  const { value } = await fetchJson(url, limits);
  const document = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (document.issuer !== issuer) throw new Error(`${describeUrl(url)}: the document names another issuer`);
  let endpoint: URL | undefined;
  try {
    endpoint =
      typeof document.introspection_endpoint === "string"
        ? new URL(document.introspection_endpoint)
        : undefined;
  } catch {
    endpoint = undefined;
  }
  if (endpoint === undefined || !isAllowedRemoteUrl(endpoint)) {
    throw new Error(`${describeUrl(url)}: no usable introspection_endpoint (https, or http on loopback)`);
  }
  return endpoint;
}
