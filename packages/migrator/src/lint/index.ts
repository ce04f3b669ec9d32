// `@agent-platform/migrator/lint`: static checks of SQL migrations on PostgreSQL's own parser. Its own entry
// because it needs libpg-query (an optional peer dependency), which applications that only migrate never install.
export {
  DEFAULT_POSTGRES_VERSION,
  type LintFinding,
  type LintOptions,
  type LintReport,
  lint,
  MAX_LINT_FILE_BYTES,
} from "./lint.js";
export { type LintRule, type LintRuleId, type LintSeverity, lintRules } from "./rules.js";
