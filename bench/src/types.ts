/** The shapes every group returns and the report turns into results.json, BENCHMARKS.md and the charts. */

export interface Table {
  title: string;
  columns: string[];
  rows: string[][];
  /** Footnotes, e.g. why a cell says n/a. */
  notes?: string[];
}

export type BarKind = "floor" | "ours" | "peer";

export interface Bar {
  label: string;
  /** null: the row could not be measured (unsupported or not available); drawn as a note, not a bar. */
  value: number | null;
  kind: BarKind;
  note?: string;
}

export interface Chart {
  title: string;
  /** What the value axis means, e.g. "CPU per op, × floor". */
  unit: string;
  sections: { name: string; bars: Bar[] }[];
  /** A vertical reference line (e.g. 1 for "× floor"). */
  reference?: number;
  /** Whether a longer bar is better (throughput) or worse (cost); shown in the caption. */
  higherIsBetter: boolean;
}

export interface Target {
  name: string;
  goal: string;
  measured: string;
  /** null: not measured in this run (the reason is in `measured`). */
  met: boolean | null;
}

export interface GroupResult {
  id: string;
  title: string;
  /** Set when the whole group did not run, with the reason. */
  skipped?: string;
  method: string[];
  tables: Table[];
  charts: Chart[];
  targets: Target[];
  /** Every measured figure, machine-readable. */
  figures: unknown;
  /** Wall time the group took, set by the runner. */
  seconds?: number;
  /** Set when the group was measured in a later run merged into the report (`--only=… --merge`). */
  measuredSeparately?: {
    date: string;
    commit: string;
    loadAverage: { start: number; end: number };
    /** The ids of every group that run measured (this one among them). */
    groups?: string[];
  };
}

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  platform: string;
  node: string;
  hostname: string;
}
