import { field, list, location, type Node, strings, unwrap } from "../ast.js";
import { defineRule } from "../rule.js";
import { tableKey } from "../state.js";
import { alterTableCommands, columnConstraints } from "../syntax.js";

// Functions that are not volatile, so a DEFAULT calling them is evaluated once and the table is not rewritten;
// the value is the number of arguments they take (-1: any).
const NON_VOLATILE_FUNCTIONS = new Map([
  ["now", 0],
  ["transaction_timestamp", 0],
  ["statement_timestamp", 0],
  ["lower", 1],
  ["upper", 1],
  ["length", 1],
  ["concat", -1],
  ["jsonb_build_object", -1],
  ["jsonb_build_array", -1],
  ["json_build_object", -1],
  ["json_build_array", -1],
  ["to_jsonb", 1],
  ["make_interval", -1],
]);

// Deeper expressions are not followed (and count as volatile): the call stack is bounded.
const MAX_DEPTH = 64;

/** Whether a DEFAULT expression is known not to be volatile (unknown functions count as volatile). */
function nonVolatile(expression: unknown, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  const inner = (operand: unknown) => nonVolatile(operand, depth + 1);
  const [kind, body] = unwrap(expression);
  switch (kind) {
    case "A_Const":
    case "SQLValueFunction":
      return true;
    case "TypeCast":
    case "NullTest":
      return inner(body.arg);
    case "A_Expr":
      return [body.lexpr, ...(Array.isArray(body.rexpr) ? body.rexpr : [body.rexpr])].every(
        (operand) => operand === undefined || inner(operand),
      );
    case "BoolExpr":
    case "CoalesceExpr":
    case "MinMaxExpr":
      return list(body.args).every(inner);
    case "A_ArrayExpr":
      return list(body.elements).every(inner);
    case "FuncCall": {
      const arity = NON_VOLATILE_FUNCTIONS.get(strings(body.funcname).at(-1) ?? "");
      const args = list(body.args);
      return arity !== undefined && (arity === -1 || arity === args.length) && args.every(inner);
    }
    default:
      return false;
  }
}

export default defineRule({
  id: "adding-field-with-default",
  severity: "error",
  why: "ADD COLUMN with a volatile DEFAULT (random(), clock_timestamp(), a sequence, an identity, a stored generated column) rewrites the whole table under an ACCESS EXCLUSIVE lock; a constant or stable default (now()) does not (before PostgreSQL 11, any default does).",
  instead: "Add the column without the default (or with a constant), set the default, backfill in batches.",
  squawk: "adding-field-with-default",
  silenceable: true,
  aliases: ["volatile-default"],
  check(kind, body, { state, report }) {
    if (!state.existing(body.relation)) return;
    for (const cmd of alterTableCommands(kind, body)) {
      if (cmd.subtype !== "AT_AddColumn") continue;
      const column = field(cmd.def, "ColumnDef") as Node | undefined;
      const name = `${tableKey(body.relation)}.${String(column?.colname)}`;
      const constraints = columnConstraints(column);
      const generated = constraints.find(
        (c) => c.contype === "CONSTR_IDENTITY" || c.contype === "CONSTR_GENERATED",
      );
      const fill = constraints.find((c) => c.contype === "CONSTR_DEFAULT");
      if (generated) {
        report(
          `ADD COLUMN ${name} as an identity or generated column rewrites the table`,
          location(generated),
        );
      } else if (fill && (state.settings.postgresVersion < 11 || !nonVolatile(fill.raw_expr))) {
        report(`ADD COLUMN ${name} with a DEFAULT that may be volatile rewrites the table`, location(fill));
      }
    }
  },
});
