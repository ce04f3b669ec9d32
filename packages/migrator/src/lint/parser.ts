/** A node of PostgreSQL's raw parse tree as libpg-query prints it: `{ NodeType: { ...fields } }`. */
export type AstNode = Record<string, unknown>;

export interface ParsedStatement {
  /** `{ IndexStmt: {...} }` and the like. */
  readonly stmt: AstNode;
  /** Byte offset where the statement's text starts: just after the previous `;`, so leading comments belong to it. */
  readonly start: number;
  /** Byte offset just after its last character (before its `;`). */
  readonly end: number;
}

export type ParseOutcome =
  | { readonly ok: true; readonly statements: readonly ParsedStatement[] }
  | { readonly ok: false; readonly message: string; readonly cursor: number | undefined };

import { configError } from "@agent-platform/common/internal";

type LibPgQuery = typeof import("libpg-query");
let loaded: Promise<LibPgQuery> | undefined;

/** How to get the parser when it is missing: it is an optional peer dependency, needed only by `./lint`. */
export const INSTALL_PARSER = "npm install --save-dev libpg-query@^17.7.4";

/**
 * PostgreSQL's own parser (libpg-query's WebAssembly build), loaded on first use so that applications that
 * only run migrations never load it. Throws a ConfigError saying how to install it when it is not installed.
 */
export function parser(): Promise<LibPgQuery> {
  loaded ??= import("libpg-query").then(
    async (module) => {
      await module.loadModule();
      return module;
    },
    (error: unknown) => {
      loaded = undefined;
      const missing = (error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND";
      throw missing
        ? configError(
            "migrator",
            `lint needs libpg-query, an optional peer dependency: ${INSTALL_PARSER}`,
            "libpg-query",
          )
        : error;
    },
  );
  return loaded;
}

/** Parses a file's text into statements, or returns PostgreSQL's error message and cursor. */
export async function parseSql(text: string, byteLength: number): Promise<ParseOutcome> {
  const { parse } = await parser();
  let tree: { stmts?: { stmt: AstNode; stmt_location?: number; stmt_len?: number }[] };
  try {
    tree = await parse(text);
  } catch (error) {
    const details = (error as { sqlDetails?: { message?: string; cursorPosition?: number } }).sqlDetails;
    const cursor = details?.cursorPosition;
    return {
      ok: false,
      message: details?.message ?? `the parser failed: ${(error as Error).message}`,
      cursor: typeof cursor === "number" && cursor >= 0 ? cursor : undefined,
    };
  }
  const statements = (tree.stmts ?? []).map(({ stmt, stmt_location = 0, stmt_len = 0 }) => ({
    stmt,
    start: stmt_location,
    // A length of 0 means "to the end of the text" (the last statement without a `;`).
    end: stmt_len === 0 ? byteLength : stmt_location + stmt_len,
  }));
  return { ok: true, statements };
}
