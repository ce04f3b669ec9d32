/**
 * The one reading of a request path that exclusion, scope mapping and resource ids all use.
 *
 * Routers read the same bytes differently: Hono routes on `decodeURI(path)`, Express on the raw path
 * (decoding only parameters), WHATWG URL parsers resolve `..` and `%2e%2e` and turn `\` into `/`,
 * some routers decode `%2F`. A decision taken on a different reading than the router's is a bypass,
 * so the canonical path is what every such reading agrees on, and anything they could disagree on is
 * refused (400) before any handler runs:
 *
 * - query and fragment are dropped; a trailing `/` is dropped (except for `/` itself);
 * - an escape of an unreserved character (RFC 3986 §6.2.2.2) or of `!'()*` (which decodeURI decodes
 *   too) is decoded; every other escape is kept, with upper-case hex (§6.2.2.1);
 * - characters a URI cannot carry raw (space, `"<>[]^`{|}`, non-ASCII as UTF-8) are percent-encoded,
 *   so the raw and the encoded spelling are the same path;
 * - refused: an escape of `/`, `\`, NUL or any control character; a raw `\` or control character;
 *   an invalid escape (`%`, `%4`, `%zz`), escapes that are not valid UTF-8 (overlong, surrogates,
 *   truncated); a dot segment (`.`, `..`, also as `%2e`); an empty segment other than a trailing
 *   one (`//`); a path not starting with `/`; a path longer than {@link MAX_PATH_LENGTH}.
 */
import { type AuthError, invalidPathError } from "../errors.js";

/** Longest path (without query) accepted, in characters; longer ones are refused with a 400. */
export const MAX_PATH_LENGTH = 8192;

export interface CanonicalPath {
  /** `/` or `/<segment>/<segment>`, as described above. */
  readonly path: string;
  /** The segments of `path` (none for `/`). */
  readonly segments: readonly string[];
}

const ROOT: CanonicalPath = Object.freeze({ path: "/", segments: Object.freeze([]) as readonly string[] });
const HEX = "0123456789ABCDEF";

/** What a character found raw in the path becomes. */
const KEEP = 0;
const ENCODE = 1;
const REFUSE = 2;
/** What a percent-escape of an ASCII character becomes (REFUSE as above). */
const DECODE = 0;
const KEEP_ENCODED = 1;

const RAW_ASCII = new Uint8Array(128).fill(ENCODE);
const ESCAPED_ASCII = new Uint8Array(128).fill(KEEP_ENCODED);
{
  const unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
  for (const c of `${unreserved}!$&'()*+,;=:@`) RAW_ASCII[c.charCodeAt(0)] = KEEP;
  for (const c of `${unreserved}!'()*`) ESCAPED_ASCII[c.charCodeAt(0)] = DECODE;
  for (let code = 0; code < 0x20; code++) {
    RAW_ASCII[code] = REFUSE;
    ESCAPED_ASCII[code] = REFUSE;
  }
  for (const code of [0x7f, 0x5c /* \ */]) {
    RAW_ASCII[code] = REFUSE;
    ESCAPED_ASCII[code] = REFUSE;
  }
  ESCAPED_ASCII[0x2f /* / */] = REFUSE;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

/** The byte of the escape at `index` (which holds `%`), or -1 when it is not `%` and two hex digits. */
function escapedByte(text: string, index: number, end: number): number {
  if (index + 2 >= end) return -1;
  const high = hexValue(text.charCodeAt(index + 1));
  const low = hexValue(text.charCodeAt(index + 2));
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

function percent(byte: number): string {
  return `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
}

/** How many continuation bytes a UTF-8 lead byte takes and the range of the first one; undefined when invalid. */
function utf8Lead(byte: number): [count: number, low: number, high: number] | undefined {
  if (byte >= 0xc2 && byte <= 0xdf) return [1, 0x80, 0xbf];
  if (byte === 0xe0) return [2, 0xa0, 0xbf]; // no overlong 3-byte forms
  if (byte === 0xed) return [2, 0x80, 0x9f]; // no surrogates
  if (byte >= 0xe1 && byte <= 0xef) return [2, 0x80, 0xbf];
  if (byte === 0xf0) return [3, 0x90, 0xbf]; // no overlong 4-byte forms
  if (byte >= 0xf1 && byte <= 0xf3) return [3, 0x80, 0xbf];
  if (byte === 0xf4) return [3, 0x80, 0x8f]; // nothing above U+10FFFF
  return undefined;
}

function utf8Escapes(codePoint: number): string {
  const encoded = new TextEncoder().encode(String.fromCodePoint(codePoint));
  let out = "";
  for (const byte of encoded) out += percent(byte);
  return out;
}

/**
 * The canonical text of `text[start, end)`, one segment (no `/` inside), or the problem that makes
 * it refused. Most segments are plain ASCII and come back as a slice, with no copy built.
 */
function segmentAt(text: string, start: number, end: number): string | { problem: string } {
  let out: string | undefined;
  let copied = start;
  let i = start;
  while (i < end) {
    const code = text.charCodeAt(i);
    if (code === 37 /* % */) {
      const byte = escapedByte(text, i, end);
      if (byte < 0) return { problem: "invalid percent-escape" };
      let replacement: string;
      let length = 3;
      if (byte < 0x80) {
        const kind = ESCAPED_ASCII[byte];
        if (kind === REFUSE) return { problem: escapeProblem(byte) };
        replacement = kind === DECODE ? String.fromCharCode(byte) : percent(byte);
      } else {
        const lead = utf8Lead(byte);
        if (lead === undefined) return { problem: "percent-escapes that are not UTF-8" };
        const [count, low, high] = lead;
        replacement = percent(byte);
        for (let k = 0; k < count; k++) {
          const next = i + length;
          const continuation = text.charCodeAt(next) === 37 ? escapedByte(text, next, end) : -1;
          const min = k === 0 ? low : 0x80;
          const max = k === 0 ? high : 0xbf;
          if (continuation < min || continuation > max)
            return { problem: "percent-escapes that are not UTF-8" };
          replacement += percent(continuation);
          length += 3;
        }
      }
      if (replacement !== text.slice(i, i + length)) {
        out = (out ?? "") + text.slice(copied, i) + replacement;
        copied = i + length;
      }
      i += length;
    } else if (code < 128) {
      const kind = RAW_ASCII[code];
      if (kind === REFUSE) return { problem: code === 0x5c ? "backslash" : "control character" };
      if (kind === ENCODE) {
        out = (out ?? "") + text.slice(copied, i) + percent(code);
        copied = i + 1;
      }
      i++;
    } else {
      const codePoint = text.codePointAt(i) as number;
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) return { problem: "unpaired surrogate" };
      const width = codePoint > 0xffff ? 2 : 1;
      out = (out ?? "") + text.slice(copied, i) + utf8Escapes(codePoint);
      i += width;
      copied = i;
    }
  }
  const segment = out === undefined ? text.slice(start, end) : out + text.slice(copied, end);
  if (segment === "." || segment === "..") return { problem: "dot segment" };
  return segment;
}

function escapeProblem(byte: number): string {
  if (byte === 0x2f || byte === 0x5c) return "encoded '/' or '\\'";
  return byte === 0 ? "encoded NUL" : "encoded control character";
}

/** The canonical form of one pattern or path segment, or the problem that makes it refused. */
export function canonicalSegment(segment: string): string | { problem: string } {
  if (segment === "") return { problem: "empty segment" };
  return segment.includes("/") ? { problem: "'/' in a segment" } : segmentAt(segment, 0, segment.length);
}

/** The canonical path of a request path (query and fragment allowed), or the 400 that refuses it. */
export function canonicalPath(raw: string): CanonicalPath | AuthError {
  let end = raw.length;
  const query = raw.indexOf("?");
  if (query >= 0) end = query;
  const hash = raw.indexOf("#");
  if (hash >= 0 && hash < end) end = hash;
  if (end > MAX_PATH_LENGTH) return invalidPathError(`longer than ${MAX_PATH_LENGTH} characters`);
  if (raw.charCodeAt(0) !== 47 /* / */) return invalidPathError("it must start with '/'");
  // One trailing slash is not a segment: "/reports/" is "/reports", as most routers take it.
  if (end > 1 && raw.charCodeAt(end - 1) === 47) end--;
  if (end === 1) return ROOT;

  const segments: string[] = [];
  let rewritten = false;
  let start = 1;
  while (start <= end) {
    let stop = raw.indexOf("/", start);
    if (stop < 0 || stop > end) stop = end;
    if (stop === start) return invalidPathError("empty segment");
    const segment = segmentAt(raw, start, stop);
    if (typeof segment !== "string") return invalidPathError(segment.problem);
    // Rewritten: an escape decoded or added changes the length; hex upper-cased keeps it, so an escape compares.
    if (segment.length !== stop - start || (segment.includes("%") && segment !== raw.slice(start, stop)))
      rewritten = true;
    segments.push(segment);
    start = stop + 1;
  }
  const path = rewritten ? `/${segments.join("/")}` : end === raw.length ? raw : raw.slice(0, end);
  return { path, segments };
}

/**
 * `canonicalPath` remembering its last answer: most requests repeat the path before them, and then cost one string
 * comparison. One entry per reader, so it holds at most one request path (and the URL it may be a slice of).
 */
export function pathReader(): (raw: string) => CanonicalPath | AuthError {
  let lastRaw: string | undefined;
  let lastPath: CanonicalPath | undefined;
  return (raw) => {
    if (raw === lastRaw && lastPath !== undefined) return lastPath;
    const read = canonicalPath(raw);
    if ("segments" in read) {
      lastRaw = raw;
      lastPath = read;
    }
    return read;
  };
}

/**
 * `path` relative to the prefix a framework stripped before routing to the middleware's app (a Hono
 * sub-app's mount, Express's `req.baseUrl`, the Fetch adapter's `basePath`), read the same way.
 * A path outside the prefix cannot be one the app routes: refused.
 */
export function relativeTo(path: CanonicalPath, base: string): CanonicalPath | AuthError {
  if (base === "" || base === "/") return path;
  const prefix = canonicalPath(base);
  if (!("segments" in prefix)) return prefix;
  const count = prefix.segments.length;
  if (path.segments.length < count || prefix.segments.some((segment, i) => segment !== path.segments[i])) {
    return invalidPathError(`outside the mount point ${prefix.path}`);
  }
  if (count === 0) return path;
  const segments = path.segments.slice(count);
  return segments.length === 0 ? ROOT : { path: `/${segments.join("/")}`, segments };
}

/** The value a router hands its handler for a captured canonical segment: fully percent-decoded. */
export function segmentValue(segment: string): string {
  // Canonical segments hold only valid escapes of valid UTF-8: this cannot throw.
  return segment.includes("%") ? decodeURIComponent(segment) : segment;
}
