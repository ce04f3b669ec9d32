import type { HandshakeResult } from "../../channel.js";
import { secureEquals } from "../../secure-compare.js";

/**
 * Meta's subscription handshake, `GET ?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`: the
 * challenge goes back when the token is the configured one. Without a configured token it cannot pass.
 */
export async function verifyWhatsAppHandshake(
  query: URLSearchParams,
  verifyToken: string | undefined,
): Promise<HandshakeResult> {
  if (verifyToken === undefined || verifyToken === "") {
    return {
      ok: false,
      status: 500,
      errorCode: "INTERNAL_SERVER_ERROR",
      detail: "WHATSAPP_VERIFY_TOKEN is not configured",
    };
  }
  const token = query.get("hub.verify_token") ?? "";
  if (query.get("hub.mode") !== "subscribe" || !(await secureEquals(token, verifyToken))) {
    return { ok: false, status: 403, errorCode: "FORBIDDEN", detail: "Verification failed" };
  }
  const challenge = query.get("hub.challenge");
  if (!challenge) {
    return { ok: false, status: 400, errorCode: "BAD_REQUEST", detail: "Missing hub.challenge" };
  }
  return { ok: true, challenge };
}
