import { httpUrl } from "../http-url.js";

// RFC 3986 §2.3 unreserved characters: a percent-escape of one of them means the character itself.
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** `%7e` → `~`, `%2f` → `%2F`: RFC 3986 §6.2.2.1/§6.2.2.2 percent-encoding normalisation. */
function normaliseEscapes(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/**
 * A URL as RFC 9449 §4.3 compares `htu`: without query and fragment, after syntax-based normalisation
 * (scheme and host case, percent-escapes, dot segments) and scheme-based normalisation (default port,
 * empty path as `/`), which the WHATWG parser does but for escapes. `undefined` for anything that is not
 * an absolute http(s) URL without credentials.
 */
export function normaliseHtu(value: unknown): string | undefined {
  const url = httpUrl(value, 8192);
  if (url === undefined || url.username !== "" || url.password !== "") return undefined;
  return `${url.origin}${normaliseEscapes(url.pathname)}`;
}
