import { configError } from "@agent-platform/common/internal";
import { getOrCreate } from "../get-or-create.js";
import { canonicalSegment } from "./canonical-path.js";

/**
 * Route patterns: `*` or `{name}` match exactly one non-empty segment, a trailing `/**` matches the
 * rest (zero or more segments), everything else is a case-sensitive literal, in canonical form (see
 * canonical-path.ts), as request paths are. Patterns become a segment trie once; nothing a request
 * carries ever becomes a regular expression.
 */
export interface CompiledRoute<T> {
  /** The pattern as given (`"GET /reports/*"` or `"/status"`). */
  readonly pattern: string;
  readonly method: string | undefined;
  readonly value: T;
  readonly wildcards: number;
  readonly length: number;
  readonly globstar: boolean;
  /** Pattern segments, without a trailing `**`. */
  readonly segments: readonly string[];
  /** For each single-segment wildcard, the literal segment right before it (if any). */
  readonly wildcardAfter: readonly (string | undefined)[];
}

export interface RouteMatch<T> {
  readonly route: CompiledRoute<T>;
  /** Canonical segments captured by the single-segment wildcards, in order (see `segmentValue`). */
  readonly params: readonly string[];
}

interface TrieNode<T> {
  readonly literals: Map<string, TrieNode<T>>;
  wildcard: TrieNode<T> | undefined;
  exact: CompiledRoute<T> | undefined;
  rest: CompiledRoute<T> | undefined;
}

const ANY_METHOD = "";

function newNode<T>(): TrieNode<T> {
  return { literals: new Map(), wildcard: undefined, exact: undefined, rest: undefined };
}

function isWildcardSegment(segment: string): boolean {
  return segment === "*" || (segment.length > 2 && segment.startsWith("{") && segment.endsWith("}"));
}

/** `"<METHOD> <path>"` or, when `withMethod` is false, a bare path. */
export function compileRoute<T>(pattern: string, value: T, withMethod: boolean): CompiledRoute<T> {
  let method: string | undefined;
  let path = pattern.trim();
  if (withMethod) {
    const space = path.indexOf(" ");
    if (space <= 0) throw configError("jwt-rbac", `route "${pattern}" must look like "<METHOD> <path>"`);
    method = path.slice(0, space).toUpperCase();
    path = path.slice(space + 1).trim();
  }
  if (!path.startsWith("/"))
    throw configError("jwt-rbac", `route "${pattern}": the path must start with "/"`);
  // A trailing slash is not a segment, as in request paths.
  const segments = path === "/" ? [] : path.slice(1, path.endsWith("/") ? -1 : undefined).split("/");
  const globstar = segments[segments.length - 1] === "**";
  if (globstar) segments.pop();
  const wildcardAfter: (string | undefined)[] = [];
  segments.forEach((segment, index) => {
    if (segment === "**")
      throw configError("jwt-rbac", `route "${pattern}": "**" is only allowed at the end`);
    if (isWildcardSegment(segment)) {
      const before = segments[index - 1];
      wildcardAfter.push(before === undefined || isWildcardSegment(before) ? undefined : before);
      return;
    }
    if (segment.includes("*") || segment.includes("{") || segment.includes("}")) {
      throw configError("jwt-rbac", `route "${pattern}": "${segment}" mixes a wildcard with text`);
    }
    // Literals are compared with canonical request segments, so they are written the same way; one a
    // request could never have (an empty or dot segment, an encoded "/") is a configuration error.
    const canonical = canonicalSegment(segment);
    if (typeof canonical !== "string")
      throw configError("jwt-rbac", `route "${pattern}": ${canonical.problem} "${segment}"`);
    segments[index] = canonical;
  });
  return {
    pattern,
    method,
    value,
    wildcards: wildcardAfter.length + (globstar ? 1 : 0),
    length: segments.length,
    globstar,
    segments,
    wildcardAfter,
  };
}

// Most specific first: fewer wildcards, then more segments, then an exact end over a `/**` end.
function moreSpecific<T>(a: CompiledRoute<T>, b: CompiledRoute<T>): boolean {
  if (a.wildcards !== b.wildcards) return a.wildcards < b.wildcards;
  if (a.length !== b.length) return a.length > b.length;
  return !a.globstar && b.globstar;
}

export class RouteTable<T> {
  readonly #roots = new Map<string, TrieNode<T>>();
  readonly #caseSensitive: boolean;

  /**
   * Later entries with the same shape (`*` and `{name}` are the same) replace earlier ones.
   * `caseSensitive: false` compares literal segments case-insensitively (for routers that do, like
   * Express by default); captured segments keep their case.
   */
  constructor(
    routes: Iterable<CompiledRoute<T>>,
    { caseSensitive = true }: { caseSensitive?: boolean } = {},
  ) {
    this.#caseSensitive = caseSensitive;
    for (const route of routes) this.#insert(route);
  }

  #insert(route: CompiledRoute<T>): void {
    const methodKey = route.method ?? ANY_METHOD;
    let node = getOrCreate(this.#roots, methodKey, newNode<T>);
    for (const segment of route.segments) {
      if (isWildcardSegment(segment)) {
        node.wildcard ??= newNode();
        node = node.wildcard;
      } else {
        node = getOrCreate(node.literals, this.#caseSensitive ? segment : segment.toLowerCase(), newNode<T>);
      }
    }
    if (route.globstar) node.rest = route;
    else node.exact = route;
  }

  /**
   * The most specific route for the segments of a canonical path; `HEAD` falls back to `GET` routes,
   * as routers serve it.
   */
  match(method: string, segments: readonly string[]): RouteMatch<T> | undefined {
    const keys = this.#caseSensitive ? segments : segments.map((segment) => segment.toLowerCase());
    const upper = method.toUpperCase();
    let best = this.#matchIn(this.#roots.get(upper), segments, keys);
    if (best === undefined && upper === "HEAD") best = this.#matchIn(this.#roots.get("GET"), segments, keys);
    const any = this.#matchIn(this.#roots.get(ANY_METHOD), segments, keys);
    if (any !== undefined && (best === undefined || moreSpecific(any.route, best.route))) best = any;
    return best;
  }

  #matchIn(
    root: TrieNode<T> | undefined,
    segments: readonly string[],
    keys: readonly string[],
  ): RouteMatch<T> | undefined {
    return root === undefined ? undefined : walk(root, segments, keys, 0, [], undefined);
  }
}

function better<T>(
  route: CompiledRoute<T> | undefined,
  params: readonly string[],
  best: RouteMatch<T> | undefined,
): RouteMatch<T> | undefined {
  return route !== undefined && (best === undefined || moreSpecific(route, best.route))
    ? { route, params: params.slice() }
    : best;
}

function walk<T>(
  node: TrieNode<T>,
  segments: readonly string[],
  keys: readonly string[],
  index: number,
  params: string[],
  found: RouteMatch<T> | undefined,
): RouteMatch<T> | undefined {
  let best = better(node.rest, params, found);
  if (index === segments.length) return better(node.exact, params, best);
  const segment = segments[index] as string;
  const literal = node.literals.get(keys[index] as string);
  if (literal !== undefined) best = walk(literal, segments, keys, index + 1, params, best);
  if (node.wildcard !== undefined && segment !== "") {
    params.push(segment);
    best = walk(node.wildcard, segments, keys, index + 1, params, best);
    params.pop();
  }
  return best;
}

/** Compiles `"<METHOD> <path>"` keys of a mapping into a table. */
export function routeTable<T>(
  mappings: Readonly<Record<string, T>>,
  options: { caseSensitive?: boolean } = {},
): RouteTable<T> {
  return new RouteTable(
    Object.entries(mappings).map(([pattern, value]) => compileRoute(pattern, value, true)),
    options,
  );
}
