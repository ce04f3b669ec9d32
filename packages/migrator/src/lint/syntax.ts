import { field, findNodes, lastName, list, location, type Node } from "./ast.js";

/** The subcommands of an `ALTER TABLE` (not of ALTER INDEX, VIEW, ...). */
export function alterTableCommands(kind: string, body: Node): Node[] {
  if (kind !== "AlterTableStmt" || body.objtype !== "OBJECT_TABLE") return [];
  return list(body.cmds)
    .map((command) => field(command, "AlterTableCmd") as Node | undefined)
    .filter((cmd): cmd is Node => cmd !== undefined);
}

/** The constraints declared on a column definition. */
export const columnConstraints = (column: Node | undefined): Node[] =>
  list(column?.constraints)
    .map((constraint) => field(constraint, "Constraint") as Node | undefined)
    .filter((constraint): constraint is Node => constraint !== undefined);

export interface ColumnType {
  /** The type's own name, without schema (`int4`, `varchar`, `serial`). */
  readonly type: string;
  /** Whether it has a length or precision (`varchar(10)`). */
  readonly modified: boolean;
  /** `the column x`, or `the column's new type`. */
  readonly what: string;
  readonly at: number | undefined;
}

/** Every column type a statement declares: CREATE TABLE, ADD COLUMN, ALTER COLUMN TYPE, composite types. */
export function columnTypes(stmt: unknown): ColumnType[] {
  return findNodes(stmt, "ColumnDef").map((column) => ({
    type: lastName(field(column.typeName, "names")),
    modified: list(field(column.typeName, "typmods")).length > 0,
    what: typeof column.colname === "string" ? `the column ${column.colname}` : "the column's new type",
    at: location(column.typeName) ?? location(column),
  }));
}

export const SERIAL_TYPES = new Set(["serial", "serial4", "bigserial", "serial8", "smallserial", "serial2"]);
