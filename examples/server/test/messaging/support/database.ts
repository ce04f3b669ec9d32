// The messaging store's test databases (a shared PGlite, or a fresh PostgreSQL database) live with the
// package they test; the server's messaging tests use the same.
export * from "../../../../../packages/messaging/test/support/database.js";
