import { z } from "@hono/zod-openapi";
import { DATABASE_ID_PATTERN } from "../config.js";
import { versionProblem } from "../migrate.js";
import { namedErrorBody } from "./contract.js";
import { ERROR_CODES } from "./errors.js";

export const BadRequestResponse = namedErrorBody(
  "BadRequestResponse",
  ERROR_CODES[400],
  "Unknown target version '9.9.9'. Known versions: 2.0.0, 2.3.0, 2.5.0, 2.5.6",
);
export const UnauthenticatedResponse = namedErrorBody(
  "UnauthenticatedResponse",
  ERROR_CODES[401],
  "Authorization header missing",
);
export const ForbiddenResponse = namedErrorBody(
  "ForbiddenResponse",
  ERROR_CODES[403],
  "Insufficient permissions. Required scope(s): config:write",
);
export const NotFoundResponse = namedErrorBody(
  "NotFoundResponse",
  ERROR_CODES[404],
  "No database found with id 'analytics'",
);
export const ValidationErrorResponse = namedErrorBody(
  "ValidationErrorResponse",
  ERROR_CODES[422],
  "target_version: must be a version such as 2.5.6",
);
export const InternalServerErrorResponse = namedErrorBody(
  "InternalServerErrorResponse",
  ERROR_CODES[500],
  "Failed to migrate database: could not create unique index",
);
export const HeadersTooLargeResponse = namedErrorBody(
  "HeadersTooLargeResponse",
  ERROR_CODES[431],
  "Request header fields too large",
);
export const MigrationBlockedResponse = namedErrorBody(
  "MigrationBlockedResponse",
  ERROR_CODES[503],
  "Migration 2.5.6 (knowledge_content_hash) could not lock a relation it changes within 5000 ms while running up: another session holds a conflicting lock; retry when that session is done",
);
export const ServiceUnavailableResponse = namedErrorBody(
  "ServiceUnavailableResponse",
  ERROR_CODES[503],
  "Databases not answering: analytics",
);

export const DatabaseIdParam = z
  .string()
  .regex(DATABASE_ID_PATTERN, {
    error: "must be 1-63 letters, digits, '_' or '-', starting with a letter or digit",
  })
  .openapi({
    param: { name: "db_id", in: "path" },
    description: "Id of a registered database (`default` unless DATABASES names others)",
    example: "default",
  });

/**
 * The query of the migrate operations. Strict: an unknown parameter (a typo like `?target=2.3.0`) is a 422,
 * never silently "the latest version". The grammar is the migrator's own (`parseVersion`).
 */
export const TargetVersionQuery = z.strictObject({
  target_version: z
    .string()
    .superRefine((value, ctx) => {
      const problem = versionProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional()
    .openapi({
      param: { name: "target_version", in: "query" },
      description:
        "Schema version to migrate to, up or down (`MAJOR.MINOR.PATCH`, optional `-PRERELEASE`, optional leading `v`); the latest when omitted",
      example: "2.5.6",
    }),
});

export const MigrationResult = z
  .object({
    message: z.string().openapi({ example: "Database migrated successfully to version 2.5.6" }),
    db_id: z.string(),
    from_version: z.string().nullable().openapi({ description: "Version before the call; null when empty" }),
    to_version: z.string().openapi({ description: "Version after the call" }),
    direction: z.enum(["up", "down", "none"]),
    applied: z.array(z.string()).openapi({ description: "Versions run, in order (down runs newest first)" }),
  })
  .openapi("MigrationResult");

export const MigrateAllResult = z
  .object({
    message: z.string(),
    results: z.record(
      z.string(),
      z.union([
        MigrationResult.extend({ status: z.literal(200) }),
        z.object({ status: z.number().int(), detail: z.string(), error_code: z.string() }),
      ]),
    ),
  })
  .openapi("MigrateAllResult");

export const MigrationStatus = z
  .object({
    db_id: z.string(),
    current: z.string().nullable(),
    latest: z.string(),
    applied: z.array(
      z.object({
        version: z.string(),
        name: z.string(),
        applied_at: z.string().openapi({ format: "date-time" }),
        execution_ms: z.number(),
      }),
    ),
    pending: z.array(z.object({ version: z.string(), name: z.string() })),
    lock: z
      .object({
        pid: z.number().int(),
        since: z.string().nullable().openapi({ format: "date-time" }),
      })
      .nullable()
      .openapi({
        description:
          "A migration run holding the database's migration lock now (its backend pid, and since when), or null",
      }),
  })
  .openapi("MigrationStatus");
