/**
 * A chat product's stamp in seconds since 1970 (WhatsApp's `timestamp` string, Telegram's `date` number, Slack's
 * `ts` such as `"1700000000.000100"`) as milliseconds, or undefined for anything else: a missing or odd stamp
 * only means the message is ordered by its arrival. Plain decimal digits only, at most microseconds.
 */
/** `{ sentAt }` for a message whose stamp reads (see stampToMs), `{}` otherwise. */
export function stamped(value: unknown): { sentAt?: number } {
  const sentAt = stampToMs(value);
  return sentAt === undefined ? {} : { sentAt };
}

export function stampToMs(value: unknown): number | undefined {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text !== "string" || !/^\d{9,11}(\.\d{1,6})?$/.test(text)) return undefined;
  const ms = Math.round(Number(text) * 1000);
  return Number.isFinite(ms) ? ms : undefined;
}
