import { configError } from "@agent-platform/common/internal";
import type { AuditMode, DecisionListener } from "./decision.js";

/** The `onDecision`/`audit` options, checked: present only with `onDecision`. */
export interface AuditConfig {
  readonly onDecision: DecisionListener;
  /** `audit: "all"`: authenticated requests passed on are reported too. */
  readonly all: boolean;
}

/**
 * `onDecision` and `audit`, checked at construction; undefined without `onDecision`, so an authenticator without it
 * runs exactly the code it ran before.
 */
export function resolveAudit(options: {
  readonly onDecision?: DecisionListener | undefined;
  readonly audit?: AuditMode | undefined;
}): AuditConfig | undefined {
  const { onDecision, audit = "denied" } = options;
  if (audit !== "denied" && audit !== "all") throw configError("jwt-rbac", 'audit must be "denied" or "all"');
  if (onDecision === undefined) return undefined;
  if (typeof onDecision !== "function") throw configError("jwt-rbac", "onDecision must be a function");
  return { onDecision, all: audit === "all" };
}
