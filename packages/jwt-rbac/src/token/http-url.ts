/** `value` parsed as an absolute `http:` or `https:` URL of at most `maxLength` characters; `undefined` otherwise. */
export function httpUrl(value: unknown, maxLength: number): URL | undefined {
  if (typeof value !== "string" || value.length > maxLength) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
}
