import { describe, expect, it } from "vitest";
import { slack } from "./channels/slack/index.js";
import { telegram } from "./channels/telegram/index.js";
import { whatsapp } from "./channels/whatsapp/index.js";

const make = {
  whatsapp: (pacing?: unknown) =>
    whatsapp({ appSecret: "s", accessToken: "a", phoneNumberId: "1", pacing } as never),
  slack: (pacing?: unknown) => slack({ signingSecret: "s", botToken: "xoxb-1", pacing } as never),
  telegram: (pacing?: unknown) => telegram({ botToken: "1:abc", secretToken: "t", pacing } as never),
};

describe("pacing", () => {
  it("defaults to each chat product's documented limits", () => {
    // WhatsApp Cloud API: pair rate 1 message / 6 s to one user, 80 messages/s per number (default tier).
    expect(make.whatsapp().pacing).toEqual({ perChatMs: 6_000, perAccountPerSecond: 80 });
    // Slack chat.postMessage: 1 message/s per channel; no per-workspace number published.
    expect(make.slack().pacing).toEqual({ perChatMs: 1_000, perAccountPerSecond: 0 });
    // Telegram Bot API FAQ: 1 message/s in one chat, about 30/s per bot.
    expect(make.telegram().pacing).toEqual({ perChatMs: 1_000, perAccountPerSecond: 30 });
  });

  it("takes each field on its own, 0 turning a limit off", () => {
    expect(make.whatsapp({ perChatMs: 200 }).pacing).toEqual({ perChatMs: 200, perAccountPerSecond: 80 });
    expect(make.telegram({ perChatMs: 0, perAccountPerSecond: 0 }).pacing).toEqual({
      perChatMs: 0,
      perAccountPerSecond: 0,
    });
  });

  it.each([
    [{ perChatMs: -1 }, "pacing.perChatMs"],
    [{ perChatMs: 1.5 }, "pacing.perChatMs"],
    [{ perChatMs: "1000" }, "pacing.perChatMs"],
    [{ perChatMs: 3_600_001 }, "pacing.perChatMs"],
    [{ perAccountPerSecond: 10_001 }, "pacing.perAccountPerSecond"],
    [{ perAccountPerSecond: Number.NaN }, "pacing.perAccountPerSecond"],
    [{ perSecond: 5 }, "pacing.perSecond"],
    ["fast", "pacing"],
    [[], "pacing"],
  ])("refuses %j naming %s, for every channel", (pacing, option) => {
    for (const factory of Object.values(make)) {
      expect(() => factory(pacing)).toThrow(expect.objectContaining({ option }));
    }
  });
});
