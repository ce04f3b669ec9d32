import { describe, expect, it } from "vitest";
import { isValidTelegramSecretToken } from "./secret-token.js";

const TOKEN = "s3cret_token-A";
const withToken = (value: string) => new Headers({ "x-telegram-bot-api-secret-token": value });

describe("isValidTelegramSecretToken", () => {
  it("accepts exactly the configured secret token", async () => {
    expect(await isValidTelegramSecretToken(withToken(TOKEN), TOKEN)).toBe(true);
  });

  it.each([
    ["missing", new Headers()],
    ["empty", withToken("")],
    ["a prefix of it", withToken(TOKEN.slice(0, -1))],
    ["longer", withToken(`${TOKEN}x`)],
    ["in another case", withToken(TOKEN.toUpperCase())],
    ["another token", withToken("another-token")],
  ])("refuses a token that is %s", async (_, headers) => {
    expect(await isValidTelegramSecretToken(headers, TOKEN)).toBe(false);
  });

  it("refuses to compare against an empty secret token", async () => {
    await expect(isValidTelegramSecretToken(withToken(""), "")).rejects.toThrow("must not be empty");
  });
});
