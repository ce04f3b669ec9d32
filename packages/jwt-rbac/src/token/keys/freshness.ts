export interface FreshnessBounds {
  /** When the response says nothing. */
  readonly defaultMs: number;
  /** The shortest honoured lifetime (the refetch cooldown): `no-cache` or `max-age=0` cannot force a fetch per request. */
  readonly minMs: number;
  /** The longest honoured lifetime: a key set is looked at again at least this often. */
  readonly maxMs: number;
}

const MAX_AGE = /^max-age\s*=\s*"?(\d{1,12})"?$/i;

/** How long a fetched document stays fresh, from its `Cache-Control` header, within `bounds`. */
export function freshnessMs(cacheControl: string | null, bounds: FreshnessBounds): number {
  let lifetime: number | undefined;
  for (const directive of (cacheControl ?? "").split(",")) {
    const trimmed = directive.trim();
    const lower = trimmed.toLowerCase();
    if (lower === "no-cache" || lower === "no-store") {
      lifetime = 0;
      break;
    }
    const match = MAX_AGE.exec(trimmed);
    if (match !== null) lifetime = Number(match[1]) * 1000;
  }
  return Math.min(bounds.maxMs, Math.max(bounds.minMs, lifetime ?? bounds.defaultMs));
}
