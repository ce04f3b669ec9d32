import { type Hook, z } from "@hono/zod-openapi";

/**
 * What every Hono route of the agent platform shares, in one place: the error body, the 422 hook, the
 * bearer scheme's name, and the bound on input echoed back. The reference server's routes and the
 * messaging package's routes both use these, so one OpenAPI document describes one error shape.
 */

/** Name of the bearer security scheme in the OpenAPI document (the platform interface's name for it). */
export const BEARER_SCHEME = "HTTPBearer";

/** The one error body: `{ detail, error_code }`, the shape of every 4xx/5xx answer. */
export const ErrorBody = z.object({
  detail: z.string().openapi({ description: "Error detail message" }),
  error_code: z.string().nullable().optional().openapi({ description: "Error code for categorization" }),
});

/** A JSON response entry of a route, for `createRoute({ responses })`. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** How much of a client's input an error detail may repeat. */
export const MAX_ECHO_CHARS = 64;

/**
 * The one place input is echoed from: a detail repeats at most `MAX_ECHO_CHARS` characters of what the
 * client sent, then an ellipsis, so a 3,000-digit version or a 10 kB parameter name is not sent back whole.
 */
export function capEcho(input: string): string {
  if (input.length <= MAX_ECHO_CHARS) return input;
  // Counted in code points, so an emoji is never cut in half.
  const points = Array.from(input.slice(0, MAX_ECHO_CHARS * 2));
  if (points.length <= MAX_ECHO_CHARS && input.length <= MAX_ECHO_CHARS * 2) return input;
  return `${points.slice(0, MAX_ECHO_CHARS).join("")}…`;
}

// Bounds the detail whatever the request carried: a handful of issues, each echoing at most 64 characters.
const MAX_ISSUES = 5;

function describeIssue(issue: z.ZodError["issues"][number], target: string): string {
  if (issue.code === "unrecognized_keys") {
    const where = target === "query" ? "query parameter" : "field";
    const names = issue.keys.slice(0, MAX_ISSUES).map((key) => `'${capEcho(key)}'`);
    const more = issue.keys.length > MAX_ISSUES ? ` and ${issue.keys.length - MAX_ISSUES} more` : "";
    return `unknown ${where}${issue.keys.length === 1 ? "" : "s"} ${names.join(", ")}${more}`;
  }
  const path = issue.path.map((part) => capEcho(String(part))).join(".");
  return `${path || target}: ${issue.message}`;
}

/** Renders a failed zod validation as the detail of a 422, naming each bad part of the request. */
export function validationDetail(error: z.ZodError, target: string): string {
  const { issues } = error;
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => describeIssue(issue, target));
  if (issues.length > MAX_ISSUES) shown.push(`and ${issues.length - MAX_ISSUES} more`);
  return shown.join("; ");
}

/** The one validation hook, the `defaultHook` of every `OpenAPIHono`: 422 `VALIDATION_ERROR`. */
/** The `defaultHook` of an OpenAPIHono app: a failed request validation answers 422 with the one error body. */
// biome-ignore lint/suspicious/noExplicitAny: a hook for any route's input, env, path and response type
export const validationHook: Hook<any, any, any, any> = (result, c) => {
  if (result.success) return;
  const body: z.infer<typeof ErrorBody> = {
    detail: validationDetail(result.error, result.target),
    error_code: "VALIDATION_ERROR",
  };
  return c.json(body, 422);
};
