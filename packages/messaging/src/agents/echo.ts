import type { AgentHandler } from "./agent.js";

/** The default agent: answers with the text it got, so the channel works without an agent runtime. */
export const echoAgent: AgentHandler = async (message) => {
  if (message.text !== "") return { text: message.text };
  return { text: `Received your ${message.type} message.` };
};
