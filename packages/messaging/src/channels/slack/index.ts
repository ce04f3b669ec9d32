import { configError } from "@agent-platform/common/internal";
import type { Channel } from "../../channel.js";
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
}

const SLACK_DEFAULT_API_BASE_URL = "https://slack.com/api";

/** Slack (Events API). Throws a ConfigError for options it cannot work with. */
export function slack(options: SlackOptions): Channel {
  const problems: string[] = [];
  if (!options.signingSecret) problems.push("signingSecret is required");
  if (!options.botToken) problems.push("botToken is required");
  if (problems.length > 0)
    throw configError("messaging", `slack: ${problems.join("; ")}`, undefined, problems);
  return createSlackChannel({
    signingSecret: options.signingSecret,
    botToken: options.botToken,
    apiBaseUrl: options.apiBaseUrl ?? SLACK_DEFAULT_API_BASE_URL,
    apiTimeoutMs: options.apiTimeoutMs ?? 10_000,
    now: Date.now,
  });
}
