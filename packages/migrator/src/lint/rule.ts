import type { Node } from "./ast.js";
import type { StatementText } from "./names.js";
import type { FileState } from "./state.js";

/** How a finding counts: errors fail `lint` (exit status 1), warnings are reported only. */
export type LintSeverity = "error" | "warning";

/** What a rule's check sees of one statement. */
export interface RuleContext {
  /** The file's state before this statement (tables created, transaction, timeouts set). */
  readonly state: FileState;
  /** Byte offset of the statement's first token. */
  readonly at: number;
  /** The statement's text in the file (identifier-too-long reads how names were spelled). */
  readonly text: StatementText;
  /** Reports a finding of this rule, at `where` (a byte offset) or at the statement. */
  report(message: string, where?: number): void;
}

/** A lint rule: squawk's id, its severity, why it matters, the fix, and its check. */
export interface LintRule {
  readonly id: string;
  readonly severity: LintSeverity;
  /** What the rule catches and why, in one sentence. */
  readonly why: string;
  /** What to write instead. */
  readonly instead: string;
  /** The squawk rule with the same intent (usually the same id), so squawk users can map their configuration. */
  readonly squawk?: string;
  /** Findings about the file itself (it could not be read, parsed or silenced) cannot be silenced. */
  readonly silenceable: boolean;
  /** Off unless named in `LintOptions.enable` (squawk's opt-in rules). */
  readonly optIn?: boolean;
  /** Former ids, still accepted in silences. */
  readonly aliases?: readonly string[];
  /** Checks one statement (`kind` is its node type, e.g. `IndexStmt`). */
  readonly check?: (kind: string, body: Node, context: RuleContext) => void;
  /** Runs after the file's last statement, with `at` the offset of the file's end. */
  readonly end?: (context: RuleContext) => void;
}

/** A rule, its id kept as a literal type so that `LintRuleId` lists every id. */
export const defineRule = <const Id extends string>(rule: LintRule & { readonly id: Id }) => rule;
