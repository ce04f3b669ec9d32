export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Three significant figures, the precision these measurements support. */
export function sig(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (value >= 1000) return Math.round(value).toLocaleString("en-US");
  return Number(value.toPrecision(3)).toString();
}

export function ratio(value: number, base: number): string {
  return `${(value / base).toFixed(2)}x`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
