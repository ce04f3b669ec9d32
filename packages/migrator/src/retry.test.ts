import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY, retryDelayMs, retryOption, withRetry } from "./retry.js";

describe("retryOption", () => {
  it("is on by default, off with false, and fills what is not given", () => {
    expect(retryOption(undefined)).toEqual({ attempts: 4, baseMs: 500, maxMs: 10_000 });
    expect(retryOption(false)).toEqual({ ...DEFAULT_RETRY, attempts: 1 });
    expect(retryOption({ attempts: 2 })).toEqual({ ...DEFAULT_RETRY, attempts: 2 });
    expect(retryOption({ attempts: 1, baseMs: 0, maxMs: 0 })).toEqual({ attempts: 1, baseMs: 0, maxMs: 0 });
  });
});

describe("retryDelayMs", () => {
  const policy = { attempts: 10, baseMs: 100, maxMs: 1_000 };

  it("doubles from baseMs up to maxMs, half of it random", () => {
    const low = (attempt: number) => retryDelayMs(policy, attempt, () => 0);
    const high = (attempt: number) => retryDelayMs(policy, attempt, () => 1);
    expect([1, 2, 3, 4, 5, 6].map(low)).toEqual([50, 100, 200, 400, 500, 500]);
    expect([1, 2, 3, 4, 5, 6].map(high)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  });

  it("stays finite and within maxMs for any attempt", () => {
    for (const attempt of [31, 100, 1_000]) {
      expect(retryDelayMs({ attempts: 1, baseMs: 3_600_000, maxMs: 3_600_000 }, attempt)).toBeLessThanOrEqual(
        3_600_000,
      );
    }
  });
});

describe("withRetry", () => {
  const policy = { attempts: 3, baseMs: 1, maxMs: 1 };

  it("runs again only what is retryable, at most `attempts` times, and throws the last error as it is", async () => {
    const tries: number[] = [];
    const waits: number[] = [];
    const last = new Error("third");
    const error = await withRetry(
      policy,
      async (n) => {
        tries.push(n);
        throw n === 3 ? last : new Error(String(n));
      },
      { retryable: () => true, onRetry: ({ attempt }) => waits.push(attempt) },
    ).catch((e: unknown) => e);
    expect(error).toBe(last);
    expect(tries).toEqual([1, 2, 3]);
    expect(waits).toEqual([1, 2]);

    let runs = 0;
    await expect(
      withRetry(
        policy,
        async () => {
          runs++;
          throw new Error("fatal");
        },
        { retryable: () => false },
      ),
    ).rejects.toThrow("fatal");
    expect(runs).toBe(1);
    await expect(withRetry(policy, async (n) => n, { retryable: () => true })).resolves.toBe(1);
  });

  it("ends the wait between attempts as soon as the signal is aborted, with its reason", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped");
    const started = performance.now();
    const run = withRetry(
      { attempts: 2, baseMs: 60_000, maxMs: 60_000 },
      async () => {
        throw new Error("busy");
      },
      { retryable: () => true, onRetry: () => controller.abort(reason), signal: controller.signal },
    );
    await expect(run).rejects.toBe(reason);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
