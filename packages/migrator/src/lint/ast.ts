/** Readers for libpg-query's JSON parse tree, where every node is `{ NodeType: { ...fields } }`. */
export type Node = Record<string, unknown>;

export const field = (node: unknown, key: string): unknown =>
  typeof node === "object" && node !== null ? (node as Node)[key] : undefined;
export const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
/** A node's byte offset in the text; -1 (unknown) and absence read as undefined. */
export const location = (node: unknown): number | undefined => {
  const at = field(node, "location");
  return typeof at === "number" && at >= 0 ? at : undefined;
};
/** `{ Kind: body }` -> [Kind, body]. */
export const unwrap = (node: unknown): [string, Node] => {
  const [entry] = Object.entries((node ?? {}) as Node);
  return entry ? [entry[0], (entry[1] ?? {}) as Node] : ["", {}];
};
/** The `sval`s of a list of `{ String: { sval } }` nodes. */
export const strings = (value: unknown): string[] =>
  list(value).map((item) => String(field(field(item, "String"), "sval") ?? ""));
/** The last name of a qualified name list (`pg_catalog.int4` -> `int4`). */
export const lastName = (value: unknown): string => strings(value).at(-1) ?? "";

/**
 * Every `{ kind: body }` node under `node` (the node itself included), in document order. Iterative: a
 * parse tree can nest thousands deep (an expression in parentheses), deeper than the call stack.
 */
export function findNodes(node: unknown, kind: string): Node[] {
  const found: Node[] = [];
  const pending: [string, unknown][] = [["", node]];
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    const [key, value] = entry;
    if (typeof value !== "object" || value === null) continue;
    if (key === kind && !Array.isArray(value)) found.push(value as Node);
    const children: [string, unknown][] = Array.isArray(value)
      ? value.map((item) => ["", item])
      : Object.entries(value as Node);
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i] as [string, unknown]);
  }
  return found;
}

/** A DefElem option list's entry `name`: absent, on (no value or a true value), or off (`false`, `off`, 0). */
export function option(options: unknown, name: string): "absent" | "on" | "off" {
  const element = list(options)
    .map((item) => field(item, "DefElem") as Node | undefined)
    .find((item) => item?.defname === name);
  if (!element) return "absent";
  if (element.arg === undefined) return "on";
  const [kind, value] = unwrap(element.arg);
  const text = String(
    kind === "Integer" ? (value.ival ?? 0) : (value.sval ?? value.boolval ?? ""),
  ).toLowerCase();
  return ["false", "off", "0", "no"].includes(text) ? "off" : "on";
}
