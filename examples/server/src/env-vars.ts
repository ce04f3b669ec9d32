import { z } from "zod";

/**
 * The one parser for environment variables. Every variable of the server and of the messaging channel
 * goes through these builders, so one rule holds everywhere:
 *
 * - values are trimmed; unset and empty (`VAR=` or `VAR="  "`) mean the same thing: not set, so the
 *   default applies;
 * - `envBoolean`: `true/false`, `1/0`, `yes/no`, `on/off`, any case;
 * - `envInteger`: plain decimal digits only, inside `[min, max]`. `1e3`, `0x10`, `+5`, `1.0` are refused
 *   rather than read as numbers a person did not write;
 * - `envList`: comma-separated, items trimmed, empty items dropped;
 * - `envUrl`: an `http(s)://` URL (or the given protocols);
 * - `envEnum`: one of a fixed set of words.
 *
 * Each builder is a zod schema for one variable: put them in a `z.object({ NAME: envX(...) })` and parse
 * `process.env` with it; `describeEnvIssues` turns a failed parse into one line per bad variable.
 */

/** Trimmed text; `undefined` when unset or blank. */
export const envText = z
  .string()
  .optional()
  .transform((value) => {
    const trimmed = value?.trim();
    return trimmed === undefined || trimmed === "" ? undefined : trimmed;
  });

const TRUE_WORDS = ["true", "1", "yes", "on"];
const BOOLEAN_WORDS = [...TRUE_WORDS, "false", "0", "no", "off"];

export function envBoolean(fallback: boolean) {
  return envText.transform((value, ctx) => {
    if (value === undefined) return fallback;
    const word = value.toLowerCase();
    if (!BOOLEAN_WORDS.includes(word)) {
      ctx.addIssue({ code: "custom", message: "expected one of true, false, 1, 0, yes, no, on, off" });
      return z.NEVER;
    }
    return TRUE_WORDS.includes(word);
  });
}

export function envInteger(fallback: number, range: { min: number; max: number }) {
  return envText.transform((value, ctx) => {
    if (value === undefined) return fallback;
    // Digits only and a bounded length, so `Number()` never sees exponents, hex or a 10 kB string.
    const number = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(number)) {
      ctx.addIssue({ code: "custom", message: "expected a whole number" });
      return z.NEVER;
    }
    if (number < range.min || number > range.max) {
      ctx.addIssue({ code: "custom", message: `expected a whole number from ${range.min} to ${range.max}` });
      return z.NEVER;
    }
    return number;
  });
}

export const envList = envText.transform((value) =>
  value
    ?.split(",")
    .map((item) => item.trim())
    .filter((item) => item !== ""),
);

export function envUrl(protocols: RegExp = /^https?$/) {
  return envText.pipe(z.url({ protocol: protocols, error: "expected an http(s) URL" }).optional());
}

export function envEnum<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) {
  return envText.pipe(
    z
      .string()
      .transform((value) => value.toLowerCase())
      .pipe(z.enum(values, { error: `expected one of ${values.join(", ")}` }))
      .optional()
      .transform((value): T[number] => value ?? fallback),
  );
}

/** `NAME: problem`, one line per issue. */
export function describeEnvIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const variable = issue.path[0];
    return variable === undefined ? issue.message : `${String(variable)}: ${issue.message}`;
  });
}
