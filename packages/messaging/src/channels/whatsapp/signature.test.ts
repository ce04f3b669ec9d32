import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isValidSignature, signatureFor } from "./signature.js";

const body = new TextEncoder().encode('{"object":"whatsapp_business_account"}');
const hex = createHmac("sha256", "secret").update(body).digest("hex");

describe("isValidSignature", () => {
  it("accepts the HMAC-SHA256 of the raw bytes, in either hex case", () => {
    expect(isValidSignature(`sha256=${hex}`, body, "secret")).toBe(true);
    expect(isValidSignature(`sha256=${hex.toUpperCase()}`, body, "secret")).toBe(true);
    expect(signatureFor(body, "secret")).toBe(`sha256=${hex}`);
  });

  it.each([
    ["missing", null],
    ["empty", ""],
    ["unprefixed", hex],
    ["another algorithm", `sha1=${hex}`],
    ["too short", `sha256=${hex.slice(2)}`],
    ["not hex", `sha256=${"z".repeat(64)}`],
    ["another secret's", signatureFor(body, "other")],
  ])("rejects a %s signature", (_, header) => {
    expect(isValidSignature(header, body, "secret")).toBe(false);
  });

  it("rejects a signature of other bytes", () => {
    expect(isValidSignature(`sha256=${hex}`, new TextEncoder().encode("{}"), "secret")).toBe(false);
  });
});
