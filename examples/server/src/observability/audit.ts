import type { AccessDecision, DecisionListener } from "@agent-platform/jwt-rbac";
import pino, { type DestinationStream, type Logger } from "pino";
import { serverLogOptions } from "../http/logging.js";

/**
 * The audit trail's own logger, on the server log's destination: the same JSON lines (`level`, `service`), but
 * its `time` is the decision's (milliseconds since the epoch, as on every other line), written once.
 */
export function createAuditLogger(level: string, destination: DestinationStream): Logger {
  return pino({ ...serverLogOptions(level), timestamp: false }, destination);
}

/**
 * Each refusal as one `event: "access.denied"` line at info, with every field of the decision; with `all`, each
 * authenticated request passed on as `event: "access.allowed"` too. The token is never in a decision.
 */
export function auditLog(logger: Logger, mode: "denied" | "all"): DecisionListener {
  return (decision: AccessDecision) => {
    if (!decision.allowed) logger.info({ event: "access.denied", ...decision }, "access denied");
    else if (mode === "all") logger.info({ event: "access.allowed", ...decision }, "access allowed");
  };
}
