import type { Bar, BarKind, Chart } from "./types.js";

const COLOURS: Record<BarKind, string> = { floor: "#6b7280", ours: "#2563eb", peer: "#f59e0b" };
const WIDTH = 820;
const LABEL_WIDTH = 300;
const VALUE_WIDTH = 90;
const ROW = 20;
const SECTION_GAP = 26;
const TOP = 54;

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function formatValue(value: number): string {
  if (value >= 1000) return Math.round(value).toLocaleString("en-US");
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** A horizontal bar chart as a plain SVG string: one block of bars per section, a legend and an optional reference line. */
export function renderChart(chart: Chart): string {
  const values = chart.sections.flatMap((s) => s.bars.map((b) => b.value ?? 0));
  const max = Math.max(chart.reference ?? 0, ...values) || 1;
  const barArea = WIDTH - LABEL_WIDTH - VALUE_WIDTH - 20;
  const scale = (v: number) => (v / max) * barArea;
  const parts: string[] = [];
  let y = TOP;
  for (const section of chart.sections) {
    parts.push(
      `<text x="10" y="${y + 14}" font-weight="bold" font-size="13">${escapeXml(section.name)}</text>`,
    );
    y += SECTION_GAP - 4;
    for (const bar of section.bars) {
      parts.push(drawBar(bar, y, scale));
      y += ROW;
    }
    y += 8;
  }
  const height = y + 30;
  if (chart.reference !== undefined) {
    const x = (LABEL_WIDTH + scale(chart.reference)).toFixed(1);
    parts.push(
      `<line x1="${x}" y1="${TOP - 6}" x2="${x}" y2="${y}" stroke="#111827" stroke-dasharray="4 3" stroke-width="1"/>`,
      `<text x="${Number(x) + 3}" y="${TOP - 8}" font-size="11" fill="#111827">${formatValue(chart.reference)}</text>`,
    );
  }
  const legend = (Object.keys(COLOURS) as BarKind[])
    .map(
      (kind, i) =>
        `<rect x="${10 + i * 110}" y="${height - 22}" width="12" height="12" fill="${COLOURS[kind]}"/>` +
        `<text x="${26 + i * 110}" y="${height - 12}" font-size="12">${kind === "ours" ? "ours" : kind}</text>`,
    )
    .join("");
  const caption = `${chart.unit} — ${chart.higherIsBetter ? "longer is better" : "shorter is better"}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">${escapeXml(chart.title)}</text>`,
    `<text x="10" y="40" font-size="12" fill="#374151">${escapeXml(caption)}</text>`,
    ...parts,
    legend,
    "</svg>",
    "",
  ].join("\n");
}

function drawBar(bar: Bar, y: number, scale: (v: number) => number): string {
  const label = `<text x="${LABEL_WIDTH - 8}" y="${y + 13}" font-size="12" text-anchor="end">${escapeXml(bar.label)}</text>`;
  if (bar.value === null) {
    return `${label}<text x="${LABEL_WIDTH + 4}" y="${y + 13}" font-size="11" fill="#6b7280">${escapeXml(bar.note ?? "not measured")}</text>`;
  }
  const width = Math.max(1, scale(bar.value));
  return (
    label +
    `<rect x="${LABEL_WIDTH}" y="${y + 2}" width="${width.toFixed(1)}" height="${ROW - 6}" fill="${COLOURS[bar.kind]}"/>` +
    `<text x="${(LABEL_WIDTH + width + 4).toFixed(1)}" y="${y + 13}" font-size="11">${formatValue(bar.value)}${bar.note ? ` ${escapeXml(bar.note)}` : ""}</text>`
  );
}
