import { describe, expect, it } from "vitest";
import { migrationErrorToApi } from "./migrate.js";

const KNOWN = ["2.0.0", "2.5.6"];

function migratorError(code: string, message = `${code} message`) {
  return Object.assign(new Error(message), { code });
}

describe("migrationErrorToApi", () => {
  it.each([
    ["INVALID_VERSION", 422, "VALIDATION_ERROR"],
    ["UNKNOWN_VERSION", 400, "BAD_REQUEST"],
    ["IRREVERSIBLE", 400, "BAD_REQUEST"],
    ["CHECKSUM_MISMATCH", 400, "BAD_REQUEST"],
    ["UNKNOWN_APPLIED_VERSION", 400, "BAD_REQUEST"],
    ["OUT_OF_ORDER", 400, "BAD_REQUEST"],
    ["MIGRATION_FAILED", 500, "INTERNAL_SERVER_ERROR"],
    ["DDL_LOCK_TIMEOUT", 503, "SERVICE_UNAVAILABLE"],
    ["LOCK_TIMEOUT", 500, "INTERNAL_SERVER_ERROR"],
    ["ECONNREFUSED", 500, "INTERNAL_SERVER_ERROR"],
  ])("maps %s to %i %s", (code, status, errorCode) => {
    const error = migrationErrorToApi(migratorError(code), "9.9.9", KNOWN);
    expect(error.status).toBe(status);
    expect(error.errorCode).toBe(errorCode);
  });

  it("tells the client when to retry a migration blocked by another session's lock, and only then", () => {
    expect(migrationErrorToApi(migratorError("DDL_LOCK_TIMEOUT"), undefined, KNOWN).retryAfterSeconds).toBe(
      5,
    );
    expect(migrationErrorToApi(migratorError("MIGRATION_FAILED"), undefined, KNOWN).retryAfterSeconds).toBe(
      undefined,
    );
  });

  it("words the details", () => {
    expect(migrationErrorToApi(migratorError("UNKNOWN_VERSION"), "9.9.9", KNOWN).detail).toBe(
      "Unknown target version '9.9.9'. Known versions: 2.0.0, 2.5.6",
    );
    expect(
      migrationErrorToApi(migratorError("OUT_OF_ORDER", "2.3.0 is pending"), undefined, KNOWN).detail,
    ).toBe("2.3.0 is pending");
    expect(migrationErrorToApi(migratorError("MIGRATION_FAILED", "boom"), undefined, KNOWN).detail).toBe(
      "Failed to migrate database: boom",
    );
    expect(migrationErrorToApi("not an error", undefined, KNOWN).detail).toBe(
      "Failed to migrate database: not an error",
    );
  });
});
