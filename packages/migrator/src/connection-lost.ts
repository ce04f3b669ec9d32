// What postgres.js raises when the connection itself is gone: the socket was reset, closed or destroyed.
const CONNECTION_LOST_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "CONNECTION_CLOSED",
  "CONNECTION_DESTROYED",
  "CONNECTION_ENDED",
]);

/**
 * Whether `error`, raised by a query on the run's own connection, means that connection's backend is gone.
 * Then the server has already rolled back the open transaction and dropped the session's advisory lock,
 * so the run must not send anything more on it. Only the error itself is looked at, never its `cause`:
 * a migration's failure may wrap the loss of some other connection it used, which says nothing about
 * the run's own, which must still roll back and unlock.
 */
export function isConnectionLost(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code } = error as { code?: unknown };
  return typeof code === "string" && CONNECTION_LOST_CODES.has(code);
}
