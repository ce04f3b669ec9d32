import { field, findNodes, lastName, list, location, type Node, strings, unwrap } from "../ast.js";
import { defineRule } from "../rule.js";

let unknownSubscripts = 0;

/**
 * A target as a path: `a` -> [a], `a.x` -> [a, .x], `a[1]` -> [a, [1]]. A subscript that is not a constant
 * is a step of its own, equal to no other: whether two of them meet is not known before run time.
 */
function targetPath(target: Node): string[] {
  return [
    String(target.name),
    ...list(target.indirection).map((step) => {
      const [kind, body] = unwrap(step);
      if (kind === "String") return `.${String(body.sval)}`;
      const [constKind, constant] = unwrap(field(body, "uidx"));
      const value = field(constant.ival, "ival") ?? field(constant.sval, "sval");
      return constKind === "A_Const" && body.lidx === undefined && !body.is_slice
        ? `[${String(value ?? 0)}]`
        : `[?${unknownSubscripts++}]`;
    }),
  ];
}

/** Two targets write the same place when one path is the other's prefix (`a` and `a.x`, `a` and `a`). */
const overlap = (a: string[], b: string[]) => {
  const shorter = a.length <= b.length ? a : b;
  const longer = shorter === a ? b : a;
  return shorter.every((step, i) => step === longer[i]);
};

/** The name PostgreSQL gives a select list entry without an alias. */
function outputName(target: Node): string {
  if (typeof target.name === "string") return target.name;
  const [kind, body] = unwrap(target.val);
  if (kind === "ColumnRef")
    return String(field(list(body.fields).at(-1), "String") ? strings(body.fields).at(-1) : "?column?");
  if (kind === "FuncCall") return lastName(body.funcname);
  if (kind === "TypeCast") return lastName(field(body.typeName, "names"));
  return "?column?";
}

const resTargets = (value: unknown): Node[] =>
  list(value)
    .map((item) => field(item, "ResTarget") as Node | undefined)
    .filter((target): target is Node => target !== undefined);

/** Lists of names a statement assigns or declares, each of which must not repeat. */
function nameLists(kind: string, body: Node): { paths: string[][]; at: (number | undefined)[] }[] {
  const lists: Node[][] = [];
  const names: string[][] = [];
  switch (kind) {
    case "UpdateStmt":
      lists.push(resTargets(body.targetList));
      break;
    case "InsertStmt":
      lists.push(resTargets(body.cols));
      lists.push(resTargets(field(body.onConflictClause, "targetList")));
      break;
    case "MergeStmt":
      for (const clause of list(body.mergeWhenClauses))
        lists.push(resTargets(field(field(clause, "MergeWhenClause"), "targetList")));
      break;
    case "CreateStmt":
    case "CreateForeignTableStmt": {
      const table = kind === "CreateStmt" ? body : (body.base as Node);
      names.push(findNodes(list(table.tableElts), "ColumnDef").map((column) => String(column.colname)));
      break;
    }
    case "ViewStmt":
      names.push(
        list(body.aliases).length > 0
          ? strings(body.aliases)
          : resTargets(
              field(body.query, "SelectStmt") && field(field(body.query, "SelectStmt"), "targetList"),
            ).map(outputName),
      );
      break;
    case "SelectStmt":
      if (body.intoClause) names.push(resTargets(body.targetList).map(outputName));
      break;
  }
  return [
    ...lists.map((targets) => ({
      paths: targets.map(targetPath),
      at: targets.map((target) => location(target)),
    })),
    ...names.map((columns) => ({ paths: columns.map((name) => [name]), at: columns.map(() => undefined) })),
  ];
}

export default defineRule({
  id: "ban-duplicate-column-assignments",
  severity: "error",
  why: "A column assigned or declared twice in one statement is either an error at run time or a silent overwrite of the first value.",
  instead: "Name each column once.",
  squawk: "ban-duplicate-column-assignments",
  silenceable: true,
  check(kind, body, { report }) {
    for (const { paths, at } of nameLists(kind, body)) {
      for (let i = 1; i < paths.length; i++) {
        const path = paths[i] as string[];
        if (paths.slice(0, i).some((earlier) => overlap(earlier, path))) {
          report(`the column ${path.join("")} is named twice`, at[i]);
        }
      }
    }
  },
});
