import { z } from "zod";
import { postJson } from "../channels/send.js";
import { DeliveryError } from "../errors.js";
import { OptionChecks } from "../options.js";
import type { AgentHandler } from "./agent.js";

const answerSchema = z.object({ text: z.string().nullable().optional() });

/**
 * An agent runtime behind `url`: the message is POSTed as JSON, the answer is JSON `{text}` (a null or empty
 * text, or 204, means no reply). Network errors, timeouts, an answer cut short and 5xx/429 are retried; other 4xx
 * and malformed answers fail the message, since sending the same request again would get the same answer.
 */
export function createHttpAgent(url: string, timeoutMs: number): AgentHandler {
  const checks = new OptionChecks("createHttpAgent");
  checks.url("url", url, "");
  checks.integer("timeoutMs", timeoutMs, 0, 1);
  if (timeoutMs === undefined) checks.problem("timeoutMs", "is required");
  checks.done();
  const agent: AgentHandler = async (message, options) => {
    const answer = await postJson("Agent", url, {
      headers: { accept: "application/json" },
      body: message,
      timeoutMs,
      code: "AGENT_FAILED",
      signal: options?.signal,
    });
    if (!answer.complete) {
      // Asking an agent again has no effect outside it, so a broken answer is worth another try.
      throw new DeliveryError(
        "AGENT_FAILED",
        `Agent answered ${answer.status} but the answer broke off`,
        true,
      );
    }
    if (answer.status === 204) return null;
    if (answer.status < 200 || answer.status >= 300) {
      const retryable = answer.status >= 500 || answer.status === 429;
      throw new DeliveryError(
        "AGENT_FAILED",
        `Agent answered ${answer.status}: ${answer.text.slice(0, 500)}`,
        retryable,
        { retryAfterMs: answer.retryAfterMs },
      );
    }
    const parsed = answerSchema.safeParse(answer.json);
    if (!parsed.success) {
      throw new DeliveryError("AGENT_FAILED", "Agent answer is not JSON of the form {text}", false);
    }
    return parsed.data.text ? { text: parsed.data.text } : null;
  };
  return Object.assign(agent, { timeoutMs });
}
