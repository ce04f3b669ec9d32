import { field, list, location, type Node, strings, unwrap } from "./ast.js";
import type { AstNode } from "./parser.js";
import type { LintRuleId } from "./rules.js";

/** A finding before it is placed: `at` is a byte offset into the file. */
export interface RawFinding {
  readonly rule: LintRuleId;
  readonly at: number;
  readonly message: string;
}

/** What the checks remember while they walk one migration file's statements in order. */
export class FileState {
  /** Tables created earlier in this file: statements on them lock nobody out. Keys as in `tableKey`. */
  readonly created = new Set<string>();
  /** Whether a lock_timeout is in force at this point of the file. */
  lockTimeout: boolean;
  lockTimeoutReported = false;
  /** `runnerLockTimeout`: the migrator sets a lock_timeout before the file's first statement. */
  constructor(
    readonly transactional: boolean,
    runnerLockTimeout: boolean,
  ) {
    this.lockTimeout = runnerLockTimeout;
  }
}

/** `schema.table` or `table`: migrations run with the search path set to their schema. */
function tableKey(relation: unknown): string {
  const schema = field(relation, "schemaname");
  const name = String(field(relation, "relname") ?? "");
  return typeof schema === "string" ? `${schema}.${name}` : name;
}

const SERIAL_TYPES = new Set(["serial", "serial4", "bigserial", "serial8", "smallserial", "serial2"]);

// Functions that are not volatile, so a DEFAULT calling them is evaluated once and the table is not rewritten.
const NON_VOLATILE_FUNCTIONS = new Set([
  "now",
  "transaction_timestamp",
  "statement_timestamp",
  "lower",
  "upper",
  "length",
  "concat",
  "jsonb_build_object",
  "jsonb_build_array",
  "json_build_object",
  "json_build_array",
  "to_jsonb",
  "make_interval",
]);

/** Whether a DEFAULT expression is known not to be volatile (unknown functions count as volatile). */
function nonVolatile(expression: unknown): boolean {
  const [kind, body] = unwrap(expression);
  switch (kind) {
    case "A_Const":
    case "SQLValueFunction":
      return true;
    case "TypeCast":
    case "NullTest":
      return nonVolatile(body.arg);
    case "A_Expr":
      return [body.lexpr, ...(Array.isArray(body.rexpr) ? body.rexpr : [body.rexpr])].every(
        (operand) => operand === undefined || nonVolatile(operand),
      );
    case "BoolExpr":
    case "CoalesceExpr":
    case "MinMaxExpr":
      return list(body.args).every(nonVolatile);
    case "A_ArrayExpr":
      return list(body.elements).every(nonVolatile);
    case "FuncCall":
      return (
        NON_VOLATILE_FUNCTIONS.has(strings(body.funcname).at(-1) ?? "") && list(body.args).every(nonVolatile)
      );
    default:
      return false;
  }
}

/** Findings of one statement; `at` is where its first token is. Updates `state`. */
export function checkStatement(stmt: AstNode, at: number, state: FileState): RawFinding[] {
  const findings: RawFinding[] = [];
  const report = (rule: LintRuleId, message: string, where: number | undefined = at) =>
    findings.push({ rule, at: where ?? at, message });
  const existing = (relation: unknown) => !state.created.has(tableKey(relation));
  // Whether the statement takes a lock that blocks other sessions on a table in use.
  let locks = false;

  const [kind, body] = unwrap(stmt);
  switch (kind) {
    case "CreateStmt":
      // IF NOT EXISTS may meet an existing, populated table: it is not counted as new.
      if (!body.if_not_exists) state.created.add(tableKey(body.relation));
      break;
    case "CreateTableAsStmt":
      if (!body.if_not_exists) state.created.add(tableKey(field(body.into, "rel")));
      break;
    case "IndexStmt": {
      const table = tableKey(body.relation);
      if (body.concurrent && state.transactional) {
        report(
          "concurrently-in-transaction",
          "CREATE INDEX CONCURRENTLY in a migration that runs in a transaction",
        );
      } else if (!body.concurrent && existing(body.relation)) {
        report(
          "require-concurrent-index-creation",
          `CREATE INDEX on the existing table ${table} without CONCURRENTLY`,
        );
        locks = true;
      }
      break;
    }
    case "ReindexStmt":
      if (
        state.transactional &&
        list(body.params).some((p) => field(field(p, "DefElem"), "defname") === "concurrently")
      ) {
        report(
          "concurrently-in-transaction",
          "REINDEX CONCURRENTLY in a migration that runs in a transaction",
        );
      }
      break;
    case "DropStmt":
      if (body.removeType === "OBJECT_INDEX") {
        if (body.concurrent && state.transactional) {
          report(
            "concurrently-in-transaction",
            "DROP INDEX CONCURRENTLY in a migration that runs in a transaction",
          );
        } else if (!body.concurrent) {
          report("require-concurrent-index-deletion", "DROP INDEX without CONCURRENTLY");
          locks = true;
        }
      } else if (body.removeType === "OBJECT_TABLE") {
        for (const object of list(body.objects)) {
          const name = strings(field(field(object, "List"), "items")).join(".");
          if (state.created.delete(name)) continue;
          report("ban-drop-table", `DROP TABLE ${name}: code still running may use it`);
          locks = true;
        }
      }
      break;
    case "DropdbStmt":
      report("ban-drop-database", `DROP DATABASE ${String(body.dbname)}`);
      break;
    case "TransactionStmt": {
      const nesting = [
        "TRANS_STMT_BEGIN",
        "TRANS_STMT_START",
        "TRANS_STMT_COMMIT",
        "TRANS_STMT_ROLLBACK",
        "TRANS_STMT_PREPARE",
        "TRANS_STMT_COMMIT_PREPARED",
        "TRANS_STMT_ROLLBACK_PREPARED",
      ];
      if (nesting.includes(String(body.kind))) {
        report(
          "transaction-nesting",
          `${String(body.kind).replace("TRANS_STMT_", "").replace("_", " ")} in a migration`,
        );
      }
      break;
    }
    case "VariableSetStmt":
      if (body.name === "lock_timeout") {
        const [value] = list(body.args);
        const constant = field(value, "A_Const") as Node | undefined;
        // `SET lock_timeout = 0` (an empty ival is 0) and RESET/DEFAULT mean no timeout.
        const zero =
          constant === undefined ||
          (constant.ival !== undefined && !field(constant.ival, "ival")) ||
          /^\s*0+(\.0*)?\s*[a-z]*\s*$/i.test(String(field(constant.sval, "sval") ?? ""));
        state.lockTimeout = body.kind === "VAR_SET_VALUE" && !zero;
      }
      break;
    case "RenameStmt":
      if (body.renameType === "OBJECT_TABLE") {
        const from = tableKey(body.relation);
        if (state.created.delete(from)) {
          state.created.add(
            field(body.relation, "schemaname")
              ? `${String(field(body.relation, "schemaname"))}.${String(body.newname)}`
              : String(body.newname),
          );
        } else {
          report(
            "renaming-table",
            `RENAME of the table ${from}: code still running uses the old name`,
            location(body.relation),
          );
          locks = true;
        }
      } else if (
        body.renameType === "OBJECT_COLUMN" &&
        body.relationType === "OBJECT_TABLE" &&
        existing(body.relation)
      ) {
        report(
          "renaming-column",
          `RENAME of the column ${tableKey(body.relation)}.${String(body.subname)}: code still running uses the old name`,
          location(body.relation),
        );
        locks = true;
      }
      break;
    case "AlterTableStmt":
      if (body.objtype === "OBJECT_TABLE") locks = alterTable(body, existing(body.relation), state, report);
      break;
  }
  if (locks && state.transactional && !state.lockTimeout && !state.lockTimeoutReported) {
    state.lockTimeoutReported = true;
    report(
      "require-lock-timeout",
      "this statement locks an existing table, and no lock_timeout is set before it",
    );
  }
  return findings;
}

type Report = (rule: LintRuleId, message: string, where?: number) => void;

/** ALTER TABLE's subcommands; returns whether it locks a table in use. */
function alterTable(body: Node, existing: boolean, state: FileState, report: Report): boolean {
  const table = tableKey(body.relation);
  for (const command of list(body.cmds)) {
    const cmd = field(command, "AlterTableCmd") as Node | undefined;
    if (!cmd) continue;
    if (
      cmd.subtype === "AT_DetachPartition" &&
      field(field(cmd.def, "PartitionCmd"), "concurrent") &&
      state.transactional
    ) {
      report(
        "concurrently-in-transaction",
        "DETACH PARTITION CONCURRENTLY in a migration that runs in a transaction",
      );
    }
    if (!existing) continue;
    switch (cmd.subtype) {
      case "AT_AddColumn":
        addColumn(table, field(cmd.def, "ColumnDef") as Node, report);
        break;
      case "AT_AddConstraint":
        addConstraint(table, field(cmd.def, "Constraint") as Node, report);
        break;
      case "AT_AlterColumnType":
        report(
          "changing-column-type",
          `ALTER COLUMN ${String(cmd.name)} TYPE on the existing table ${table}`,
          location(field(cmd.def, "ColumnDef")),
        );
        break;
      case "AT_SetNotNull":
        report("set-not-null", `SET NOT NULL on the existing column ${table}.${String(cmd.name)}`);
        break;
      case "AT_DropColumn":
        report("ban-drop-column", `DROP COLUMN ${table}.${String(cmd.name)}: code still running may use it`);
        break;
    }
  }
  return existing;
}

function addColumn(table: string, column: Node | undefined, report: Report): void {
  if (!column) return;
  const name = `${table}.${String(column.colname)}`;
  const at = location(column);
  const type = strings(field(column.typeName, "names")).at(-1) ?? "";
  const constraints = list(column.constraints).map((c) => field(c, "Constraint") as Node);
  const has = (contype: string) => constraints.find((c) => c?.contype === contype);
  if (SERIAL_TYPES.has(type)) {
    report(
      "adding-serial-primary-key-field",
      `ADD COLUMN ${name} ${type} on an existing table rewrites it`,
      at,
    );
  }
  if (has("CONSTR_PRIMARY")) {
    report(
      "adding-serial-primary-key-field",
      `ADD COLUMN ${name} PRIMARY KEY builds its index under an exclusive lock`,
      at,
    );
  }
  if (has("CONSTR_UNIQUE")) {
    report(
      "disallowed-unique-constraint",
      `ADD COLUMN ${name} UNIQUE builds its index under an exclusive lock`,
      at,
    );
  }
  for (const constraint of constraints) {
    if (
      (constraint?.contype === "CONSTR_CHECK" || constraint?.contype === "CONSTR_FOREIGN") &&
      !constraint.skip_validation
    ) {
      report(
        "constraint-missing-not-valid",
        `ADD COLUMN ${name} with a ${constraint.contype === "CONSTR_CHECK" ? "CHECK" : "FOREIGN KEY"} constraint validates every row`,
        location(constraint) ?? at,
      );
    }
  }
  const fill = has("CONSTR_DEFAULT");
  const generated = has("CONSTR_IDENTITY") ?? has("CONSTR_GENERATED");
  if (generated) {
    report(
      "volatile-default",
      `ADD COLUMN ${name} as an identity or generated column rewrites the table`,
      location(generated) ?? at,
    );
  } else if (fill && !nonVolatile(fill.raw_expr)) {
    report(
      "volatile-default",
      `ADD COLUMN ${name} with a DEFAULT that may be volatile rewrites the table`,
      location(fill) ?? at,
    );
  } else if (has("CONSTR_NOTNULL") && !fill && !SERIAL_TYPES.has(type)) {
    report(
      "adding-required-field",
      `ADD COLUMN ${name} NOT NULL without a DEFAULT fails on a table with rows`,
      at,
    );
  }
}

function addConstraint(table: string, constraint: Node | undefined, report: Report): void {
  if (!constraint) return;
  const at = location(constraint);
  const name = typeof constraint.conname === "string" ? ` ${constraint.conname}` : "";
  switch (constraint.contype) {
    case "CONSTR_CHECK":
    case "CONSTR_FOREIGN":
      if (!constraint.skip_validation) {
        const what = constraint.contype === "CONSTR_CHECK" ? "CHECK" : "FOREIGN KEY";
        report(
          "constraint-missing-not-valid",
          `ADD CONSTRAINT${name} ${what} on the existing table ${table} without NOT VALID`,
          at,
        );
      }
      break;
    case "CONSTR_UNIQUE":
      if (constraint.indexname === undefined) {
        report(
          "disallowed-unique-constraint",
          `ADD CONSTRAINT${name} UNIQUE on the existing table ${table} without USING INDEX`,
          at,
        );
      }
      break;
    case "CONSTR_PRIMARY":
      if (constraint.indexname === undefined) {
        report(
          "adding-serial-primary-key-field",
          `ADD PRIMARY KEY on the existing table ${table} without USING INDEX`,
          at,
        );
      }
      break;
  }
}
