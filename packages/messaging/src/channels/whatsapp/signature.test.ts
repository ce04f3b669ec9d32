import { createHmac } from "node:crypto";
import { whatsAppSignature as signatureFor } from "@agent-platform/test-support/webhook-signatures";
import { describe, expect, it } from "vitest";
import { verifyWhatsAppHandshake } from "./handshake.js";
import { isValidWhatsAppSignature } from "./signature.js";

// node:crypto is the oracle: the check itself runs on WebCrypto, as it does on Bun, Deno and Workers.
const body = new TextEncoder().encode('{"object":"whatsapp_business_account"}');
const hex = createHmac("sha256", "secret").update(body).digest("hex");

describe("isValidWhatsAppSignature", () => {
  it("accepts the HMAC-SHA256 of the raw bytes, in either hex case", async () => {
    expect(await isValidWhatsAppSignature(`sha256=${hex}`, body, "secret")).toBe(true);
    expect(await isValidWhatsAppSignature(`sha256=${hex.toUpperCase()}`, body, "secret")).toBe(true);
    expect(signatureFor(body, "secret")).toBe(`sha256=${hex}`);
  });

  it.each([
    ["missing", null],
    ["empty", ""],
    ["unprefixed", hex],
    ["another algorithm", `sha1=${hex}`],
    ["too short", `sha256=${hex.slice(2)}`],
    ["too long", `sha256=${hex}00`],
    ["not hex", `sha256=${"z".repeat(64)}`],
    ["one bit off", `sha256=${hex.slice(0, -1)}${hex.endsWith("0") ? "1" : "0"}`],
    ["another secret's", signatureFor(body, "other")],
  ])("rejects a %s signature", async (_, header) => {
    expect(await isValidWhatsAppSignature(header, body, "secret")).toBe(false);
  });

  it("rejects a signature of other bytes, and of no bytes", async () => {
    expect(await isValidWhatsAppSignature(`sha256=${hex}`, new TextEncoder().encode("{}"), "secret")).toBe(
      false,
    );
    expect(await isValidWhatsAppSignature(`sha256=${hex}`, new Uint8Array(0), "secret")).toBe(false);
  });

  it("refuses to check against an empty app secret", async () => {
    await expect(isValidWhatsAppSignature(`sha256=${hex}`, body, "")).rejects.toThrow(
      "An HMAC secret must not be empty",
    );
  });
});

describe("verifyWhatsAppHandshake", () => {
  const query = (token: string, challenge = "42") =>
    new URLSearchParams({ "hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": challenge });

  it("answers the challenge for the configured token only", async () => {
    expect(await verifyWhatsAppHandshake(query("verify"), "verify")).toEqual({ ok: true, challenge: "42" });
    for (const token of ["verif", "verify ", "VERIFY", ""]) {
      expect(await verifyWhatsAppHandshake(query(token), "verify"), token).toMatchObject({ status: 403 });
    }
  });

  it("refuses another mode, a missing challenge, and any token when none is configured", async () => {
    const unsubscribe = new URLSearchParams({ "hub.mode": "unsubscribe", "hub.verify_token": "verify" });
    expect(await verifyWhatsAppHandshake(unsubscribe, "verify")).toMatchObject({ status: 403 });
    expect(await verifyWhatsAppHandshake(query("verify", ""), "verify")).toMatchObject({ status: 400 });
    expect(await verifyWhatsAppHandshake(query(""), undefined)).toMatchObject({ status: 500 });
  });
});
