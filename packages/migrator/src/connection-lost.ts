// What postgres.js raises when the connection itself is gone: the socket was reset, closed or destroyed.
const CONNECTION_LOST_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

/**
 * Whether `error` means the backend is gone. Then the server has already rolled back the open
 * transaction and dropped the session's advisory lock, and a further query on that reserved
 * connection would never settle (postgres.js 3.4), so the run must not send one.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return (typeof code === "string" && CONNECTION_LOST_CODES.has(code)) || isConnectionLost(cause);
}
