import { type Hook, z } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import { capEcho, errorResponse } from "./errors.js";

/**
 * What every part of the HTTP API shares, in one place: the error body, the 422 hook, the bearer scheme.
 * The server's routes and the messaging routes both import from here (a package that mounts routes into
 * this server should import or accept these rather than define its own).
 */

/** Name of the bearer security scheme in the OpenAPI document (the interface's name for it). */
export const BEARER_SCHEME = "HTTPBearer";

/** The one error body: `{ detail, error_code }`, the shape of every 4xx/5xx this server answers. */
export const ErrorBody = z.object({
  detail: z.string().openapi({ description: "Error detail message" }),
  error_code: z.string().nullable().optional().openapi({ description: "Error code for categorization" }),
});

/** The error body under a component name of its own, with an example (the interface names one per status). */
export function namedErrorBody(name: string, errorCode: string, exampleDetail: string) {
  return ErrorBody.openapi(name, { example: { detail: exampleDetail, error_code: errorCode } });
}

/** A JSON response entry of a route, for `createRoute({ responses })`. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

// Bounds the detail whatever the request carried: a handful of issues, each echoing at most 64 characters.
const MAX_ISSUES = 5;

function describeIssue(issue: ZodError["issues"][number], target: string): string {
  if (issue.code === "unrecognized_keys") {
    const where = target === "query" ? "query parameter" : "field";
    const names = issue.keys.slice(0, MAX_ISSUES).map((key) => `'${capEcho(key)}'`);
    const more = issue.keys.length > MAX_ISSUES ? ` and ${issue.keys.length - MAX_ISSUES} more` : "";
    return `unknown ${where}${issue.keys.length === 1 ? "" : "s"} ${names.join(", ")}${more}`;
  }
  const path = issue.path.map((part) => capEcho(String(part))).join(".");
  return `${path || target}: ${issue.message}`;
}

/** Renders a failed zod validation as 422 `VALIDATION_ERROR`, naming each bad part of the request. */
export function validationDetail(error: ZodError, target: string): string {
  const { issues } = error;
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => describeIssue(issue, target));
  if (issues.length > MAX_ISSUES) shown.push(`and ${issues.length - MAX_ISSUES} more`);
  return shown.join("; ");
}

/** The one validation hook: the `defaultHook` of every `OpenAPIHono` of this server. */
// biome-ignore lint/suspicious/noExplicitAny: a hook for any route's input, env, path and response type
export const validationHook: Hook<any, any, any, any> = (result, c) => {
  if (result.success) return;
  return errorResponse(c, 422, validationDetail(result.error, result.target));
};
