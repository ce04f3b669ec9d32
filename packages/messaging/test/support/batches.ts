import { expect } from "vitest";

type Counts = { received: number; duplicates: number };

/**
 * `count` deliveries (a multiple of 5) of message ids that overlap in every way a group commit can meet, each
 * with an outcome that is exact whatever order they are committed in:
 * - twin deliveries (the same two ids twice): one is received whole, the other is two duplicates — never split;
 * - chained pairs ({x, y} and {y, z}): one is (2, 0), the other (1, 1);
 * - deliveries of an id already stored plus a new id sent twice: exactly (1, 2).
 * Partners are sent next to each other (likely the same batch) for even pairs, far apart for odd ones.
 */
export function overlappingDeliveries(count: number) {
  const groups = count / 5;
  if (!Number.isInteger(groups)) throw new Error("count must be a multiple of 5");
  const seeded = Array.from({ length: groups }, (_, i) => `seed.${i}`);
  const twins = Array.from({ length: groups }, (_, i) => [`twin.${i}.a`, `twin.${i}.b`]);
  const chains = Array.from({ length: groups }, (_, i) => [
    [`chain.${i}.x`, `chain.${i}.y`],
    [`chain.${i}.y`, `chain.${i}.z`],
  ]);
  const lone = seeded.map((id, i) => [id, `new.${i}`, `new.${i}`]);

  const first: string[][] = [];
  const later: string[][] = [];
  for (let i = 0; i < groups; i++) {
    const twin = twins[i] as string[];
    const [chainA, chainB] = chains[i] as string[][];
    first.push(lone[i] as string[], twin, chainA as string[]);
    (i % 2 === 0 ? first : later).push(twin, chainB as string[]);
  }
  const deliveries = [...first, ...later];
  const allIds = new Set([...seeded, ...deliveries.flat()]);
  const newIds = allIds.size - seeded.length;

  return {
    seeded,
    deliveries,
    allIds,
    /** Asserts every delivery's answer (in `deliveries` order) against what its overlaps allow. */
    check(answers: Counts[]) {
      expect(answers).toHaveLength(deliveries.length);
      const answerOf = new Map<string[], Counts[]>();
      deliveries.forEach((ids, index) => {
        answerOf.set(ids, [...(answerOf.get(ids) ?? []), answers[index] as Counts]);
      });
      const sorted = (counts: Counts[]) =>
        [...counts].sort((a, b) => a.received - b.received || a.duplicates - b.duplicates);
      for (let i = 0; i < groups; i++) {
        expect(sorted(answerOf.get(twins[i] as string[]) ?? [])).toEqual([
          { received: 0, duplicates: 2 },
          { received: 2, duplicates: 0 },
        ]);
        const [chainA, chainB] = chains[i] as string[][];
        expect(
          sorted([...(answerOf.get(chainA as string[]) ?? []), ...(answerOf.get(chainB as string[]) ?? [])]),
        ).toEqual([
          { received: 1, duplicates: 1 },
          { received: 2, duplicates: 0 },
        ]);
        expect(answerOf.get(lone[i] as string[])).toEqual([{ received: 1, duplicates: 2 }]);
      }
      expect(answers.reduce((sum, counts) => sum + counts.received, 0)).toBe(newIds);
    },
  };
}
