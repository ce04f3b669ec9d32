import type { Channel } from "../../channel.js";
import { DEFAULT_API_TIMEOUT_MS, OptionChecks, optionsObject } from "../../options.js";
import { checkPacing, type PacingOptions, SLACK_PACING } from "../../pacing.js";
import { createSlackChannel } from "./channel.js";

/** Options of `slack()`. */
export interface SlackOptions {
  /** The app's signing secret: every request is checked against it. */
  signingSecret: string;
  /** The bot token (`xoxb-…`) for `chat.postMessage`. */
  botToken: string;
  /** Default `https://slack.com/api`. */
  apiBaseUrl?: string;
  /** Default 10,000. */
  apiTimeoutMs?: number;
  /** How fast replies go out; defaults: the chat product's documented limits (`SLACK_PACING`). */
  pacing?: PacingOptions;
}

const SLACK_DEFAULT_API_BASE_URL = "https://slack.com/api";

const OPTIONS = ["signingSecret", "botToken", "apiBaseUrl", "apiTimeoutMs", "pacing"] as const;

/** Slack (Events API). Throws a ConfigError naming each option it cannot work with. */
export function slack(options: SlackOptions): Channel {
  const checks = new OptionChecks("slack");
  const given = optionsObject(checks, "options", options);
  checks.knownKeys("", given, OPTIONS);
  const signingSecret = checks.text("signingSecret", given.signingSecret, true);
  const botToken = checks.text("botToken", given.botToken, true);
  const apiBaseUrl = checks.url("apiBaseUrl", given.apiBaseUrl, SLACK_DEFAULT_API_BASE_URL);
  const apiTimeoutMs = checks.integer("apiTimeoutMs", given.apiTimeoutMs, DEFAULT_API_TIMEOUT_MS, 1);
  const pacing = checkPacing(checks, given.pacing, SLACK_PACING);
  checks.done();
  return createSlackChannel({
    signingSecret: signingSecret as string,
    botToken: botToken as string,
    apiBaseUrl,
    apiTimeoutMs,
    now: Date.now,
    pacing,
  });
}
