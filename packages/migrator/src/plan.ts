import { configError } from "@agent-platform/common/internal";
import {
  ChecksumMismatchError,
  IrreversibleMigrationError,
  OutOfOrderError,
  UnknownAppliedVersionError,
  UnknownVersionError,
} from "./errors.js";
import type { CheckedMigration } from "./migration-list.js";
import type { AppliedMigration, MigrationDirection } from "./types.js";
import { compareVersions, parseVersion } from "./version.js";

export interface Plan {
  readonly from: string | null;
  /** `null`: base, below the first migration (nothing applied). */
  readonly to: string | null;
  readonly direction: MigrationDirection | "none";
  /** In execution order: ascending for up, descending for down. */
  readonly steps: CheckedMigration[];
}

/** The spelling of the target below the first migration (every migration reverted). */
export const BASE = "base";

/** Where a run goes: a checked migration, base (`null`), or a number of steps from the current version. */
export type Target = { readonly entry: CheckedMigration | null } | { readonly steps: number };

/**
 * The requested target (default: the latest), checked before any database work: exactly one of `to` and
 * `steps`; `steps` a non-zero integer (positive applies, negative reverts).
 */
export function resolveTarget(
  checked: readonly CheckedMigration[],
  to: string | undefined,
  steps: number | undefined,
): Target {
  if (to !== undefined && steps !== undefined) {
    throw configError("migrator", "give either `to` or `steps`, not both", "steps");
  }
  if (steps !== undefined) {
    if (!Number.isSafeInteger(steps) || steps === 0) {
      throw configError(
        "migrator",
        `\`steps\` must be a non-zero integer (negative reverts); got ${steps}`,
        "steps",
      );
    }
    return { steps };
  }
  if (to === undefined) return { entry: checked[checked.length - 1] as CheckedMigration };
  if (to === BASE) return { entry: null };
  const version = parseVersion(to);
  const entry = checked.find((e) => compareVersions(e.version, version) === 0);
  if (!entry) throw new UnknownVersionError(version.text);
  return { entry };
}

/** Entries whose versions appear in `applied`, after checking the history against the code. */
function appliedEntries(
  checked: readonly CheckedMigration[],
  applied: readonly AppliedMigration[],
): Set<CheckedMigration> {
  const byVersion = new Map(checked.map((e) => [e.version.text, e]));
  const result = new Set<CheckedMigration>();
  for (const row of applied) {
    const entry = byVersion.get(row.version);
    if (!entry) throw new UnknownAppliedVersionError(row.version);
    // A side without a checksum has nothing to compare: a code migration without `source`/`checksum`, or a
    // row it wrote. Rows an older migrator wrote for it hold a hash of its compiled text, ignored the same way.
    if (entry.checksum !== null && row.checksum !== null && entry.checksum !== row.checksum) {
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
  checked: readonly CheckedMigration[],
  applied: readonly AppliedMigration[],
  target: Target,
): Plan {
  const done = appliedEntries(checked, applied);
  // The checked migrations are sorted, so the last applied entry is the current version.
  let current: CheckedMigration | null = null;
  for (const entry of checked) if (done.has(entry)) current = entry;
  if (current) {
    const outOfOrder = checked.find((e) => !done.has(e) && compareVersions(e.version, current.version) < 0);
    if (outOfOrder) throw new OutOfOrderError(outOfOrder.version.text, current.version.text);
  }
  const entry = "steps" in target ? stepTarget(checked, done, current, target.steps) : target.entry;
  const from = current?.version.text ?? null;
  const to = entry?.version.text ?? null;
  const order = compareEntries(entry, current);
  if (order === 0) return { from, to, direction: "none", steps: [] };
  if (order > 0) {
    const steps = checked.filter((e) => !done.has(e) && compareEntries(e, entry) <= 0);
    return { from, to, direction: "up", steps };
  }
  const steps = checked.filter((e) => done.has(e) && compareEntries(e, entry) > 0).reverse();
  const irreversible = steps.find((e) => e.migration.down === undefined);
  if (irreversible) throw new IrreversibleMigrationError(irreversible.version.text);
  return { from, to, direction: "down", steps };
}

/** Orders entries with `null` (base) below every version. */
function compareEntries(a: CheckedMigration | null, b: CheckedMigration | null): number {
  if (!a || !b) return (a ? 1 : 0) - (b ? 1 : 0);
  return compareVersions(a.version, b.version);
}

/**
 * The entry `steps` away from `current`: the `steps`-th pending one going up, the applied one below the
 * `-steps`-th newest going down (base when that reverts everything). More steps than there are stop at
 * the last pending migration or at base, as node-pg-migrate and Flyway do.
 */
function stepTarget(
  checked: readonly CheckedMigration[],
  done: Set<CheckedMigration>,
  current: CheckedMigration | null,
  steps: number,
): CheckedMigration | null {
  if (steps > 0) {
    const pending = checked.filter((e) => !done.has(e));
    return pending[Math.min(steps, pending.length) - 1] ?? current;
  }
  const applied = checked.filter((e) => done.has(e)).reverse();
  return applied[-steps] ?? null;
}
