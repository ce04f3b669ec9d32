/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/y;

/**
 * Parses the text format (version 0.0.4) as a scraper reads it: comments skipped, label values unescaped. Throws
 * on a line it cannot read, so a malformed exposition fails the test.
 */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
    if (name === undefined) throw new Error(`not a sample: ${line}`);
    let index = name.length;
    const labels: Record<string, string> = {};
    if (line[index] === "{") {
      index++;
      while (line[index] !== "}") {
        LABEL.lastIndex = index;
        const match = LABEL.exec(line);
        if (match === null) throw new Error(`bad labels: ${line}`);
        labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_, c: string) =>
          c === "n" ? "\n" : c,
        );
        index = LABEL.lastIndex;
        if (line[index] === ",") index++;
      }
      index++;
    }
    const text = line.slice(index).trim().split(" ")[0] ?? "";
    const value = /^nan$/i.test(text) ? Number.NaN : Number(text);
    if (Number.isNaN(value) && !/^nan$/i.test(text)) throw new Error(`bad value: ${line}`);
    samples.push({ name, labels, value });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
export function find(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): Sample[] {
  return samples.filter(
    (sample) =>
      sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The sum of the matching samples' values (0 when none). */
export function total(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return find(samples, name, labels).reduce((sum, sample) => sum + sample.value, 0);
}

export async function scrape(metricsUrl: string): Promise<Sample[]> {
  const response = await fetch(`${metricsUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  return parsePrometheus(await response.text());
}
