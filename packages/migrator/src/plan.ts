import type { CatalogEntry } from "./catalog.js";
import {
  ChecksumMismatchError,
  IrreversibleMigrationError,
  OutOfOrderError,
  UnknownAppliedVersionError,
  UnknownVersionError,
} from "./errors.js";
import type { AppliedMigration, MigrationDirection } from "./types.js";
import { compareVersions, parseVersion } from "./version.js";

export interface Plan {
  readonly from: string | null;
  readonly to: string;
  readonly direction: MigrationDirection | "none";
  /** In execution order: ascending for up, descending for down. */
  readonly steps: CatalogEntry[];
}

/** The catalog entry for a requested target (default: the latest). Throws before any database work. */
export function resolveTarget(catalog: readonly CatalogEntry[], to: string | undefined): CatalogEntry {
  if (to === undefined) return catalog[catalog.length - 1] as CatalogEntry;
  const version = parseVersion(to);
  const entry = catalog.find((e) => compareVersions(e.version, version) === 0);
  if (!entry) throw new UnknownVersionError(version.text);
  return entry;
}

/** Entries whose versions appear in `applied`, after checking the history against the code. */
function appliedEntries(
  catalog: readonly CatalogEntry[],
  applied: readonly AppliedMigration[],
): Set<CatalogEntry> {
  const byVersion = new Map(catalog.map((e) => [e.version.text, e]));
  const result = new Set<CatalogEntry>();
  for (const row of applied) {
    const entry = byVersion.get(row.version);
    if (!entry) throw new UnknownAppliedVersionError(row.version);
    if (entry.checksum !== row.checksum) {
      throw new ChecksumMismatchError(row.version, row.checksum, entry.checksum);
    }
    result.add(entry);
  }
  return result;
}

/**
 * What a run must do to reach `target`, or the reason it must not start: drift (unknown applied version,
 * changed checksum), a pending migration older than the current version, or a down step without `down`.
 */
export function planMigration(
  catalog: readonly CatalogEntry[],
  applied: readonly AppliedMigration[],
  target: CatalogEntry,
): Plan {
  const done = appliedEntries(catalog, applied);
  // The catalog is sorted, so the last applied entry is the current version.
  let current: CatalogEntry | null = null;
  for (const entry of catalog) if (done.has(entry)) current = entry;
  if (current) {
    const outOfOrder = catalog.find((e) => !done.has(e) && compareVersions(e.version, current.version) < 0);
    if (outOfOrder) throw new OutOfOrderError(outOfOrder.version.text, current.version.text);
  }
  const from = current?.version.text ?? null;
  const to = target.version.text;
  const order = current ? compareVersions(target.version, current.version) : 1;
  if (order === 0) return { from, to, direction: "none", steps: [] };
  if (order > 0) {
    const steps = catalog.filter((e) => !done.has(e) && compareVersions(e.version, target.version) <= 0);
    return { from, to, direction: "up", steps };
  }
  const steps = catalog
    .filter((e) => done.has(e) && compareVersions(e.version, target.version) > 0)
    .reverse();
  const irreversible = steps.find((e) => e.migration.down === undefined);
  if (irreversible) throw new IrreversibleMigrationError(irreversible.version.text);
  return { from, to, direction: "down", steps };
}
