import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The `error_code` of every error body this server answers with. */
export const ERROR_CODES = {
  400: "BAD_REQUEST",
  401: "UNAUTHENTICATED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  408: "REQUEST_TIMEOUT",
  413: "PAYLOAD_TOO_LARGE",
  422: "VALIDATION_ERROR",
  431: "REQUEST_HEADER_FIELDS_TOO_LARGE",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
} as const;

export type ErrorStatus = keyof typeof ERROR_CODES;

export interface ErrorBody {
  detail: string;
  error_code: string;
}

/**
 * Thrown by route handlers; the app's error handler turns it into `{detail, error_code}`, with a
 * `Retry-After` header when the condition is transient and `retryAfterSeconds` says when to try again.
 */
export class ApiError extends Error {
  readonly errorCode: string;
  constructor(
    readonly status: ErrorStatus,
    readonly detail: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = "ApiError";
    this.errorCode = ERROR_CODES[status];
  }
}

export function errorResponse(
  c: Context,
  status: ErrorStatus,
  detail: string,
  retryAfterSeconds?: number,
): Response {
  const body: ErrorBody = { detail, error_code: ERROR_CODES[status] };
  if (retryAfterSeconds !== undefined) c.header("Retry-After", String(retryAfterSeconds));
  return c.json(body, status as ContentfulStatusCode);
}
