/** Request headers as a Fetch `Headers` (or anything with `get`) or a plain record (Node's `req.headers`). */
export type HeadersInput =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Case-insensitive header lookup; repeated headers are joined the way Fetch joins them. */
export function readHeader(headers: HeadersInput, lowerName: string): string | undefined {
  if (typeof headers.get === "function")
    return (headers as { get(name: string): string | null }).get(lowerName) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  let value = record[lowerName];
  if (value === undefined) {
    for (const name in record) {
      if (name.toLowerCase() === lowerName) {
        value = record[name];
        break;
      }
    }
  }
  return typeof value === "string" || value === undefined ? value : value.join(", ");
}

/** A CORS preflight (Fetch standard): `OPTIONS` with `Origin` and `Access-Control-Request-Method`. */
export function isCorsPreflight(headers: HeadersInput): boolean {
  return (
    readHeader(headers, "origin") !== undefined &&
    readHeader(headers, "access-control-request-method") !== undefined
  );
}
