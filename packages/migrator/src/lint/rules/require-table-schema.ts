import { field, list } from "../ast.js";
import { defineRule } from "../rule.js";

// The statements that name a table; temporary tables live in their own schema.
const relationOf = (kind: string, body: Record<string, unknown>): unknown =>
  kind === "CreateStmt" || kind === "AlterTableStmt"
    ? body.relation
    : kind === "CreateTableAsStmt"
      ? field(body.into, "rel")
      : undefined;

export default defineRule({
  id: "require-table-schema",
  severity: "warning",
  why: "An unqualified table name resolves through the search path. Off by default: the migrator sets the search path to its `schema` option, so unqualified names are what lets one set of migrations serve any schema.",
  instead: "Qualify the table with its schema (`public.accounts`).",
  squawk: "require-table-schema",
  silenceable: true,
  optIn: true,
  check(kind, body, { report }) {
    const relations =
      kind === "DropStmt" && body.removeType === "OBJECT_TABLE"
        ? list(body.objects).map((object) => ({
            schemaname: list(field(field(object, "List"), "items")).length > 1 ? "given" : undefined,
          }))
        : [relationOf(kind, body)].filter((relation) => relation !== undefined);
    for (const relation of relations) {
      if (field(relation, "schemaname") === undefined && field(relation, "relpersistence") !== "t") {
        report("a table named without its schema");
      }
    }
  },
});
