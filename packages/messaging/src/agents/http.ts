import { z } from "zod";
import { DeliveryError, PayloadTooLargeError } from "../errors.js";
import { MAX_ANSWER_BYTES } from "../limits.js";
import { OptionChecks } from "../options.js";
import { readAnswerText } from "../read-body.js";
import type { AgentHandler } from "./agent.js";

const answerSchema = z.object({ text: z.string().nullable().optional() });

/**
 * An agent runtime behind `url`: the message is POSTed as JSON, the answer is JSON `{text}` (a null or empty
 * text, or 204, means no reply). Network errors, timeouts and 5xx/429 are retried; other 4xx and malformed
 * answers fail the message, since sending the same request again would get the same answer.
 */
export function createHttpAgent(url: string, timeoutMs: number): AgentHandler {
  const checks = new OptionChecks("createHttpAgent");
  checks.url("url", url, "");
  checks.integer("timeoutMs", timeoutMs, 0, 1);
  if (timeoutMs === undefined) checks.problem("timeoutMs", "is required");
  checks.done();
  const agent: AgentHandler = async (message) => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new DeliveryError("AGENT_FAILED", `Agent unreachable: ${reason}`, true, { cause: error });
    }
    if (response.status === 204) return null;
    let body: string;
    try {
      body = await readAnswerText(response, MAX_ANSWER_BYTES);
    } catch (error) {
      if (!(error instanceof PayloadTooLargeError)) throw error;
      // The same request would get the same oversized answer.
      throw new DeliveryError(
        "AGENT_FAILED",
        `Agent answered ${response.status} with a body over ${MAX_ANSWER_BYTES} bytes`,
        false,
      );
    }
    if (!response.ok) {
      const retryable = response.status >= 500 || response.status === 429;
      throw new DeliveryError(
        "AGENT_FAILED",
        `Agent answered ${response.status}: ${body.slice(0, 500)}`,
        retryable,
      );
    }
    let parsed: z.infer<typeof answerSchema>;
    try {
      parsed = answerSchema.parse(JSON.parse(body));
    } catch {
      throw new DeliveryError("AGENT_FAILED", "Agent answer is not JSON of the form {text}", false);
    }
    return parsed.text ? { text: parsed.text } : null;
  };
  return Object.assign(agent, { timeoutMs });
}
