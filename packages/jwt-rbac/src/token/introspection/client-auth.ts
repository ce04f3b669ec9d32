import { importJWK, type JWK, SignJWT } from "jose";
import type { ClientAuth } from "./options.js";

/** RFC 6749 §2.3.1: the id and secret are form-urlencoded before they are joined and base64-encoded. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Adds the client's credentials to an introspection request's headers and form. */
export async function authenticateClient(
  auth: ClientAuth,
  endpoint: URL,
  headers: Record<string, string>,
  form: URLSearchParams,
): Promise<void> {
  switch (auth.method) {
    case "client_secret_basic":
      headers.authorization = `Basic ${base64(`${formEncode(auth.clientId)}:${formEncode(auth.clientSecret)}`)}`;
      return;
    case "client_secret_post":
      form.set("client_id", auth.clientId);
      form.set("client_secret", auth.clientSecret);
      return;
    case "private_key_jwt": {
      // RFC 7523 §2.2: a short-lived assertion, one per request (a fresh jti each time).
      const alg = auth.alg ?? "ES256";
      const key = "type" in auth.privateKey ? auth.privateKey : await importJWK(auth.privateKey as JWK, alg);
      const assertion = await new SignJWT({})
        .setProtectedHeader(auth.kid === undefined ? { alg } : { alg, kid: auth.kid })
        .setIssuer(auth.clientId)
        .setSubject(auth.clientId)
        .setAudience(auth.audience ?? endpoint.href)
        .setJti(crypto.randomUUID())
        .setIssuedAt()
        .setExpirationTime("60s")
        .sign(key);
      form.set("client_id", auth.clientId);
      form.set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
      form.set("client_assertion", assertion);
      return;
    }
  }
}
