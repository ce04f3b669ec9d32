import { whatsAppSignature as signatureFor } from "@agent-platform/test-support/webhook-signatures";

export const APP_SECRET = "test-app-secret";
export const VERIFY_TOKEN = "test-verify-token";
export const ACCESS_TOKEN = "test-access-token";
export const PHONE_NUMBER_ID = "109876543210";

/** Environment of a configured channel whose replies go to the stand-in Graph API at `graphUrl`. */
export function channelEnv(graphUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN,
    WHATSAPP_APP_SECRET: APP_SECRET,
    WHATSAPP_ACCESS_TOKEN: ACCESS_TOKEN,
    WHATSAPP_PHONE_NUMBER_ID: PHONE_NUMBER_ID,
    WHATSAPP_API_BASE_URL: graphUrl,
    MESSAGING_WORKER_POLL_MS: "100",
    MESSAGING_RETRY_BASE_MS: "50",
    MESSAGING_RETRY_MAX_MS: "200",
    ...extra,
  };
}

export function textMessage(id: string, from: string, body: string) {
  return { from, id, timestamp: "1700000000", type: "text", text: { body } };
}

/** A Cloud API delivery: one entry per element of `changes`, each change a list of messages. */
export function delivery(...changes: object[][]) {
  return {
    object: "whatsapp_business_account",
    entry: changes.map((messages, index) => ({
      id: `waba-${index}`,
      changes: [
        {
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: { display_phone_number: "15550000000", phone_number_id: PHONE_NUMBER_ID },
            contacts: [{ profile: { name: "Test" }, wa_id: "15551234567" }],
            messages,
          },
        },
      ],
    })),
  };
}

/** POSTs `body` to the webhook, signed with `secret` unless `signature` gives the header (null: none). */
export function postDelivery(
  baseUrl: string,
  body: object | string,
  options: { secret?: string; signature?: string | null; signal?: AbortSignal } = {},
): Promise<Response> {
  const raw = typeof body === "string" ? body : JSON.stringify(body);
  const signature =
    options.signature === undefined ? signatureFor(raw, options.secret ?? APP_SECRET) : options.signature;
  return fetch(`${baseUrl}/whatsapp/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(signature === null ? {} : { "x-hub-signature-256": signature }),
    },
    body: raw,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}
