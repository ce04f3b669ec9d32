import { field, list, type Node, strings, unwrap } from "./ast.js";

/** `schema.table` or `table`: migrations run with the search path set to their schema. */
export function tableKey(relation: unknown): string {
  const schema = field(relation, "schemaname");
  const name = String(field(relation, "relname") ?? "");
  return typeof schema === "string" ? `${schema}.${name}` : name;
}

/** A CHECK constraint seen in the migrations: on which table, and the column it proves NOT NULL, if any. */
export interface CheckConstraint {
  readonly table: string;
  readonly notNullColumn: string | undefined;
}

/** What the linter learns across the files of one directory, in version order. */
export class DirectoryState {
  /** CHECK constraints added, by name. */
  readonly checks = new Map<string, CheckConstraint>();
  /** Constraints validated (or added valid), by name. */
  readonly validated = new Set<string>();
}

export interface FileSettings {
  /** The migrator runs the file in a transaction (it has no no-transaction marker). */
  readonly transactional: boolean;
  /** The migrator sets a lock_timeout / statement_timeout on the file's transaction. */
  readonly runnerLockTimeout: boolean;
  readonly runnerStatementTimeout: boolean;
  /** The oldest PostgreSQL major version the migrations run on. */
  readonly postgresVersion: number;
}

// `SET x = 0` (an empty ival is 0), RESET and DEFAULT mean no timeout.
function setsTimeout(body: Node): boolean {
  const [value] = list(body.args);
  const constant = field(value, "A_Const") as Node | undefined;
  const zero =
    constant === undefined ||
    (constant.ival !== undefined && !field(constant.ival, "ival")) ||
    /^\s*0+(\.0*)?\s*[a-z]*\s*$/i.test(String(field(constant.sval, "sval") ?? ""));
  return body.kind === "VAR_SET_VALUE" && !zero;
}

/** `col IS NOT NULL` as a CHECK expression: the column's name, or undefined. */
function notNullColumn(expression: unknown): string | undefined {
  const [kind, body] = unwrap(expression);
  if (kind !== "NullTest" || body.nulltesttype !== "IS_NOT_NULL") return undefined;
  const fields = strings(field(field(body.arg, "ColumnRef"), "fields"));
  return fields.length === 1 ? fields[0] : undefined;
}

/** What the rules know at a point of one migration file; `apply` moves it past a statement. */
export class FileState {
  /** Whether a transaction is open here: the migrator's, or one the file began. */
  inTransaction: boolean;
  /** Where the file's BEGIN is that no COMMIT or ROLLBACK has ended yet. */
  openedByFile: number | undefined;
  /** Tables created in a transaction earlier in this file: statements on them lock nobody out. Keys as in `tableKey`. */
  readonly created = new Set<string>();
  /** Constraints added NOT VALID in the transaction that is open. */
  readonly notValidInTransaction = new Set<string>();
  lockTimeout: boolean;
  statementTimeout: boolean;
  /** What a rule remembers within the file, under its id. */
  readonly scratch = new Map<string, unknown>();
  /** Rules that report once per file and have. */
  readonly reported = new Set<string>();
  /** 0-based index of the statement being checked. */
  index = 0;

  constructor(
    readonly settings: FileSettings,
    readonly directory: DirectoryState,
  ) {
    this.inTransaction = settings.transactional;
    this.lockTimeout = settings.transactional && settings.runnerLockTimeout;
    this.statementTimeout = settings.transactional && settings.runnerStatementTimeout;
  }

  get transactional(): boolean {
    return this.settings.transactional;
  }

  /** Whether the table existed before this file (it was not created in a transaction of it). */
  existing(relation: unknown): boolean {
    return !this.created.has(tableKey(relation));
  }

  /** Records what a statement changes, after the rules have checked it. */
  apply(kind: string, body: Node, at: number): void {
    this.index++;
    switch (kind) {
      case "TransactionStmt":
        switch (body.kind) {
          case "TRANS_STMT_BEGIN":
          case "TRANS_STMT_START":
            this.openedByFile ??= at;
            this.inTransaction = true;
            break;
          case "TRANS_STMT_COMMIT":
          case "TRANS_STMT_ROLLBACK":
          case "TRANS_STMT_PREPARE":
            this.inTransaction = false;
            this.openedByFile = undefined;
            this.notValidInTransaction.clear();
            break;
        }
        break;
      case "CreateStmt":
        // IF NOT EXISTS may meet an existing, populated table: it is not counted as new.
        if (!body.if_not_exists && this.inTransaction) this.created.add(tableKey(body.relation));
        break;
      case "CreateTableAsStmt":
        if (!body.if_not_exists && this.inTransaction) this.created.add(tableKey(field(body.into, "rel")));
        break;
      case "DropStmt":
        if (body.removeType === "OBJECT_TABLE") {
          for (const object of list(body.objects)) {
            this.created.delete(strings(field(field(object, "List"), "items")).join("."));
          }
        }
        break;
      case "RenameStmt":
        if (body.renameType === "OBJECT_TABLE" && this.created.delete(tableKey(body.relation))) {
          const schema = field(body.relation, "schemaname");
          this.created.add(schema ? `${String(schema)}.${String(body.newname)}` : String(body.newname));
        }
        break;
      case "VariableSetStmt":
        if (body.name === "lock_timeout") this.lockTimeout = setsTimeout(body);
        if (body.name === "statement_timeout") this.statementTimeout = setsTimeout(body);
        break;
      case "AlterTableStmt":
        this.alterTable(body);
        break;
    }
  }

  private alterTable(body: Node): void {
    const table = tableKey(body.relation);
    for (const command of list(body.cmds)) {
      const cmd = field(command, "AlterTableCmd") as Node | undefined;
      if (cmd?.subtype === "AT_ValidateConstraint") {
        this.directory.validated.add(String(cmd.name));
      } else if (cmd?.subtype === "AT_AddConstraint") {
        const constraint = field(cmd.def, "Constraint") as Node | undefined;
        const name = constraint?.conname;
        if (typeof name !== "string") continue;
        if (constraint?.contype === "CONSTR_CHECK") {
          this.directory.checks.set(name, { table, notNullColumn: notNullColumn(constraint.raw_expr) });
        }
        if (constraint?.skip_validation) {
          this.directory.validated.delete(name);
          if (this.inTransaction) this.notValidInTransaction.add(name);
        } else this.directory.validated.add(name);
      }
    }
  }
}
