import { z } from "@hono/zod-openapi";
import { DATABASE_ID_PATTERN } from "../config.js";
import { ERROR_CODES } from "./errors.js";

function errorSchema(name: string, errorCode: string, exampleDetail: string) {
  return z
    .object({
      detail: z.string().openapi({ description: "Error detail message", example: exampleDetail }),
      error_code: z
        .string()
        .nullable()
        .optional()
        .openapi({ description: "Error code for categorization", example: errorCode }),
    })
    .openapi(name);
}

export const BadRequestResponse = errorSchema(
  "BadRequestResponse",
  ERROR_CODES[400],
  "Unknown target version '9.9.9'. Known versions: 2.0.0, 2.3.0, 2.5.0, 2.5.6",
);
export const UnauthenticatedResponse = errorSchema(
  "UnauthenticatedResponse",
  ERROR_CODES[401],
  "Authorization header missing",
);
export const ForbiddenResponse = errorSchema(
  "ForbiddenResponse",
  ERROR_CODES[403],
  "Insufficient permissions. Required scope(s): config:write",
);
export const NotFoundResponse = errorSchema(
  "NotFoundResponse",
  ERROR_CODES[404],
  "No database found with id 'analytics'",
);
export const ValidationErrorResponse = errorSchema(
  "ValidationErrorResponse",
  ERROR_CODES[422],
  "target_version: must be a version such as 2.5.6",
);
export const InternalServerErrorResponse = errorSchema(
  "InternalServerErrorResponse",
  ERROR_CODES[500],
  "Failed to migrate database: could not create unique index",
);
export const ServiceUnavailableResponse = errorSchema(
  "ServiceUnavailableResponse",
  ERROR_CODES[503],
  "Databases not answering: analytics",
);

/** The migrator's version grammar: MAJOR.MINOR.PATCH, an optional -PRERELEASE and an optional leading `v`. */
export const VERSION_PATTERN =
  /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

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

export const TargetVersionQuery = z.object({
  target_version: z
    .string()
    .regex(VERSION_PATTERN, { error: "must be a version such as 2.5.6" })
    .optional()
    .openapi({
      param: { name: "target_version", in: "query" },
      description: "Schema version to migrate to, up or down; the latest when omitted",
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
  })
  .openapi("MigrationStatus");
