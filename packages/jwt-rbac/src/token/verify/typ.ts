import { invalidTokenError } from "../../errors.js";

/**
 * The `typ` values a token may carry when `requireTyp` is set. RFC 8725 §3.11: compared
 * case-insensitively, with or without the `application/` prefix (RFC 7515 §4.1.9), so `at+jwt`
 * accepts `at+JWT` and `application/at+jwt` and nothing else: not `JWT`, not a missing `typ`.
 */
export function typMatcher(required: string): (typ: unknown) => boolean {
  const wanted = required.toLowerCase().replace(/^application\//, "");
  return (typ) => {
    if (typeof typ !== "string") return false;
    const given = typ.toLowerCase();
    return given === wanted || given === `application/${wanted}`;
  };
}

/** The one refusal of a token of another type (an ID token presented as an access token). */
export const wrongTypError = () =>
  invalidTokenError("invalid_typ", "Invalid token: wrong token type (typ), an access token is required");
