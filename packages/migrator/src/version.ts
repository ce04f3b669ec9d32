import { InvalidVersionError } from "./errors.js";

/** A parsed semantic version; `text` is the stored form (no leading `v`). */
export interface Version {
  readonly text: string;
  readonly core: readonly [number, number, number];
  readonly prerelease: readonly (string | number)[];
}

const NUMERIC = "0|[1-9]\\d*";
const IDENTIFIER = `(?:${NUMERIC}|\\d*[a-zA-Z-][0-9a-zA-Z-]*)`;
// Build metadata (`+...`) is rejected: it does not take part in ordering, so it would only hide duplicates.
const SEMVER = new RegExp(
  `^v?(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})(?:-(${IDENTIFIER}(?:\\.${IDENTIFIER})*))?$`,
);

// Far above any real version; bounds what the regular expression is run on.
const MAX_VERSION_LENGTH = 256;

/** Parses a migration version (`2.3.0`, `v2.3.0`, `2.3.0-rc.1`); throws `InvalidVersionError`. */
export function parseVersion(input: string): Version {
  const match = typeof input === "string" && input.length <= MAX_VERSION_LENGTH ? SEMVER.exec(input) : null;
  if (!match) throw new InvalidVersionError(String(input).slice(0, MAX_VERSION_LENGTH));
  const core = [Number(match[1]), Number(match[2]), Number(match[3])] as const;
  if (!core.every(Number.isSafeInteger)) throw new InvalidVersionError(input);
  const prerelease = match[4] ? match[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  return { text: input.startsWith("v") ? input.slice(1) : input, core, prerelease };
}

/** Whether `input` is a version the migrator accepts: the one grammar, for edges that validate early. */
export function isVersion(input: unknown): input is string {
  try {
    parseVersion(input as string);
    return true;
  } catch {
    return false;
  }
}

/** Semantic-version precedence: negative when `a` < `b`, zero when equal, positive when `a` > `b`. */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    const diff = (a.core[i] ?? 0) - (b.core[i] ?? 0);
    if (diff !== 0) return diff;
  }
  // A version without a prerelease ranks above the same version with one.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return b.prerelease.length - a.prerelease.length;
  }
  const length = Math.min(a.prerelease.length, b.prerelease.length);
  for (let i = 0; i < length; i++) {
    const x = a.prerelease[i] as string | number;
    const y = b.prerelease[i] as string | number;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
  return a.prerelease.length - b.prerelease.length;
}
