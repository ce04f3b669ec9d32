import { jsonResponse as json } from "@agent-platform/common/hono";
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { RegisteredDatabase } from "../../databases.js";
import { checkTarget, type MigrationResultBody, migrateDatabase, migrationStatus } from "../../migrate.js";
import type { AppEnv } from "../env.js";
import { ApiError, errorResponse } from "../errors.js";
import {
  BadRequestResponse,
  DatabaseIdParam,
  ForbiddenResponse,
  InternalServerErrorResponse,
  MigrateAllResult,
  MigrationBlockedResponse,
  MigrationResult,
  MigrationStatus,
  NotFoundResponse,
  TargetVersionQuery,
  UnauthenticatedResponse,
  ValidationErrorResponse,
} from "../schemas.js";

/** Whether a request carries a body: a non-zero length, or a chunked body with at least one byte. */
async function hasBody(request: Request): Promise<boolean> {
  const length = request.headers.get("content-length");
  if (length !== null) return length.trim() !== "0";
  if (request.body === null) return false;
  // Chunked: read until the first byte (or the end), never the whole body.
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      if (value.byteLength > 0) return true;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * The migrate operations read their input from the query only. A body (`{"target_version": "2.3.0"}`) used
 * to be ignored, migrating to the latest version instead of the one meant; now it is a 422.
 */
const refuseBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (await hasBody(c.req.raw)) {
    return errorResponse(
      c,
      422,
      "This operation takes no request body: target_version is a query parameter, e.g. POST /databases/default/migrate?target_version=2.3.0",
    );
  }
  await next();
};

const authErrors = {
  401: json(UnauthenticatedResponse, "Unauthorized: the bearer token is missing or invalid"),
  403: json(ForbiddenResponse, "Forbidden: the token lacks the required scope"),
};

const migrateAllRoute = createRoute({
  method: "post",
  path: "/databases/all/migrate",
  operationId: "migrate_all_databases",
  tags: ["Database"],
  summary: "Migrate every registered database",
  description:
    "Migrates every registered database to `target_version`, or to the latest version. 200 when all succeed; 207 with each database's result otherwise. No request body; unknown query parameters are refused.",
  middleware: [refuseBody] as const,
  request: { query: TargetVersionQuery },
  responses: {
    200: json(MigrateAllResult, "Every database migrated successfully"),
    207: json(MigrateAllResult, "Some databases failed; `results` has each one's status"),
    400: json(BadRequestResponse, "Bad Request: unknown target version"),
    ...authErrors,
    422: json(
      ValidationErrorResponse,
      "Validation Error: target_version is not a version, an unknown query parameter, or a request body",
    ),
    500: json(InternalServerErrorResponse, "Internal server error"),
  },
});

const migrateRoute = createRoute({
  method: "post",
  path: "/databases/{db_id}/migrate",
  operationId: "migrate_database",
  tags: ["Database"],
  summary: "Migrate a database",
  description:
    "Migrates the given database schema to the target version, up or down. When `target_version` is omitted, the database is migrated to the latest version. No request body; unknown query parameters are refused.",
  middleware: [refuseBody] as const,
  request: { params: z.object({ db_id: DatabaseIdParam }), query: TargetVersionQuery },
  responses: {
    200: json(MigrationResult, "Database migrated successfully"),
    400: json(
      BadRequestResponse,
      "Bad Request: unknown target version, a down-migration through an irreversible step, or drift / out-of-order history",
    ),
    ...authErrors,
    404: json(NotFoundResponse, "Database not found"),
    422: json(
      ValidationErrorResponse,
      "Validation Error: a bad db_id or target_version, an unknown query parameter, or a request body",
    ),
    500: json(InternalServerErrorResponse, "Failed to migrate database; it stays at its previous version"),
    503: {
      ...json(
        MigrationBlockedResponse,
        "Another session held a table the migration alters for longer than the lock timeout; nothing was applied. Retry after `Retry-After` seconds",
      ),
      headers: z.object({
        "Retry-After": z.string().openapi({ description: "Seconds to wait before retrying", example: "5" }),
      }),
    },
  },
});

const statusRoute = createRoute({
  method: "get",
  path: "/databases/{db_id}/migrations",
  operationId: "get_database_migrations",
  tags: ["Database"],
  summary: "Migration status of a database",
  description: "Current and latest version, applied and pending migrations.",
  request: { params: z.object({ db_id: DatabaseIdParam }) },
  responses: {
    200: json(MigrationStatus, "Migration status"),
    ...authErrors,
    404: json(NotFoundResponse, "Database not found"),
    422: json(ValidationErrorResponse, "Validation Error"),
    500: json(InternalServerErrorResponse, "Internal server error"),
  },
});

type MigrateAllEntry =
  | (MigrationResultBody & { status: 200 })
  | { status: number; detail: string; error_code: string };

export function registerDatabaseRoutes(
  app: OpenAPIHono<AppEnv>,
  databases: readonly RegisteredDatabase[],
  knownVersions: readonly string[],
): void {
  const byId = new Map(databases.map((database) => [database.id, database]));
  const find = (id: string) => {
    const database = byId.get(id);
    if (database === undefined) throw new ApiError(404, `No database found with id '${id}'`);
    return database;
  };

  // Registered before `{db_id}` so `all` is never taken for a database id.
  app.openapi(migrateAllRoute, async (c) => {
    const target = c.req.valid("query").target_version;
    checkTarget(target, knownVersions);
    const entries = await Promise.all(
      databases.map(async (database): Promise<[string, MigrateAllEntry]> => {
        try {
          return [database.id, { status: 200, ...(await migrateDatabase(database, target, knownVersions)) }];
        } catch (error) {
          const apiError =
            error instanceof ApiError ? error : new ApiError(500, "Failed to migrate database");
          return [
            database.id,
            { status: apiError.status, detail: apiError.detail, error_code: apiError.errorCode },
          ];
        }
      }),
    );
    const results = Object.fromEntries(entries);
    const failed = entries.filter(([, entry]) => entry.status !== 200).map(([id]) => id);
    if (failed.length === 0) {
      // Every database ran the same migrations to the same target, so they all end at one version.
      const [, first] = entries[0] ?? [];
      const version = first !== undefined && "to_version" in first ? first.to_version : "";
      return c.json({ message: `All databases migrated successfully to version ${version}`, results }, 200);
    }
    return c.json({ message: `Failed to migrate: ${failed.join(", ")}`, results }, 207);
  });

  app.openapi(migrateRoute, async (c) => {
    const database = find(c.req.valid("param").db_id);
    const target = c.req.valid("query").target_version;
    checkTarget(target, knownVersions);
    return c.json(await migrateDatabase(database, target, knownVersions), 200);
  });

  app.openapi(statusRoute, async (c) => {
    const database = find(c.req.valid("param").db_id);
    return c.json(await migrationStatus(database), 200);
  });
}
