import { ErrorBody } from "@agent-platform/common/hono";

/**
 * The server's part of the HTTP contract. What every part of the API shares (the error body, the 422 hook,
 * the bearer scheme's name, the bound on echoed input) is in `@agent-platform/common/hono`, which the
 * messaging routes mounted into this server use too.
 */

/** The error body under a component name of its own, with an example (the interface names one per status). */
export function namedErrorBody(name: string, errorCode: string, exampleDetail: string) {
  return ErrorBody.openapi(name, { example: { detail: exampleDetail, error_code: errorCode } });
}
