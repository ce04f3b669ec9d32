import { type Tracer, tracerFor } from "@agent-platform/common/internal";

/** The tracer of this package, when an OpenTelemetry SDK is registered (see the README's "Tracing"). */
export const migratorTracer: () => Tracer | undefined = tracerFor("@agent-platform/migrator");

/** A run: the parent span. */
export const MIGRATE_SPAN = "migrator migrate";
/** One migration of a run: a child of the run's span. */
export const MIGRATION_SPAN = "migrator migration";
