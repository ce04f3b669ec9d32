// `@agent-platform/embedded-postgres`: PGlite in this process behind a postgres.js client, and the lock that
// keeps a second process from opening the same data directory.
export {
  DataDirLockedError,
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  startEmbeddedPostgres,
} from "./embedded.js";
