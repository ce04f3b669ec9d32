import type { LintRule } from "./rule.js";
import { rules } from "./rules/index.js";

export type { LintRule, LintSeverity } from "./rule.js";

/** Every rule of `platform-migrate lint` (the files of `rules/`), in the README table's order. */
export const lintRules: readonly LintRule[] = rules;

/** The id of a rule of this lint (squawk's ids). */
export type LintRuleId = (typeof rules)[number]["id"];

const byId: ReadonlyMap<string, LintRule> = new Map(
  lintRules.flatMap((rule) => [rule.id, ...(rule.aliases ?? [])].map((id) => [id, rule] as const)),
);

/** The rule with this id (or a former id of it), or undefined for an id the linter does not have. */
export function ruleById(id: string): LintRule | undefined {
  return byId.get(id);
}
