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
