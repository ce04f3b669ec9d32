import { describe, expect, it } from "vitest";
import { InboxBusyError, InboxCommitTimeoutError } from "../errors.js";
import { GroupCommit } from "./group-commit.js";

/** A commit function whose calls the test sees and settles by hand. */
function manualCommit() {
  const calls: { items: string[]; resolve(): void; reject(error: Error): void }[] = [];
  const commit = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({ items, resolve: () => resolve(items.map((item) => `stored ${item}`)), reject });
    });
  return { calls, commit };
}

function settled<T>(promise: Promise<T>) {
  const state: { value?: T; error?: unknown; done: boolean } = { done: false };
  promise.then(
    (value) => Object.assign(state, { value, done: true }),
    (error: unknown) => Object.assign(state, { error, done: true }),
  );
  return state;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A GroupCommit over `commit` counting each item as 1, with room for 10 per commit, unless told otherwise. */
function groupOf(
  commit: (items: string[]) => Promise<string[]>,
  bounds: Partial<{ maxBatchSize: number; maxInFlight: number; maxWaitMs: number; maxCommitMs: number }> = {},
) {
  return new GroupCommit({
    commit,
    sizeOf: () => 1,
    maxBatchSize: 10,
    maxInFlight: 1,
    maxWaitMs: 60_000,
    ...bounds,
  });
}

describe("GroupCommit", () => {
  it("commits a lone item at once, and answers it only when its commit has finished", async () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit);
    const answer = settled(group.submit("a"));
    expect(calls.map((call) => call.items)).toEqual([["a"]]);
    await tick();
    expect(answer.done).toBe(false);
    calls[0]?.resolve();
    await tick();
    expect(answer.value).toBe("stored a");
  });

  it("writes what arrived during a commit together in the next one, in order, bounded by size", async () => {
    const { calls, commit } = manualCommit();
    const group = new GroupCommit({
      commit,
      sizeOf: (item: string) => item.length,
      maxBatchSize: 4,
      maxInFlight: 1,
      maxWaitMs: 60_000,
    });
    const answers = ["a", "bb", "cc", "d", "eeeeee", "f"].map((item) => settled(group.submit(item)));
    expect(calls.map((call) => call.items)).toEqual([["a"]]);
    calls[0]?.resolve();
    await tick();
    // 2 + 2 fills the batch; an item larger than the bound still goes, alone.
    expect(calls.map((call) => call.items)).toEqual([["a"], ["bb", "cc"]]);
    calls[1]?.resolve();
    await tick();
    expect(calls[2]?.items).toEqual(["d"]);
    calls[2]?.resolve();
    await tick();
    expect(calls[3]?.items).toEqual(["eeeeee"]);
    calls[3]?.resolve();
    await tick();
    expect(calls[4]?.items).toEqual(["f"]);
    calls[4]?.resolve();
    await tick();
    expect(answers.map((answer) => answer.value)).toEqual(
      ["a", "bb", "cc", "d", "eeeeee", "f"].map((item) => `stored ${item}`),
    );
  });

  it("starts the next commit before it answers the items of the one that finished", async () => {
    const { calls, commit } = manualCommit();
    const order: string[] = [];
    // Like the inbox's commit, which sends its statement one microtask after it is called.
    const group = groupOf((items) => {
      queueMicrotask(() => order.push(`sent ${items.join()}`));
      return commit(items);
    });
    const first = group.submit("a").then(() => order.push("answered a"));
    group.submit("b");
    calls[0]?.resolve();
    await first;
    // b's statement goes out before a's continuation (its HTTP response) runs, not after every answer.
    expect(order).toEqual(["sent a", "sent b", "answered a"]);
  });

  it("runs up to maxInFlight commits at once", () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit, { maxInFlight: 2 });
    for (const item of ["a", "b", "c", "d"]) void group.submit(item);
    expect(calls.map((call) => call.items)).toEqual([["a"], ["b"]]);
  });

  it("fails every item of a failed commit, and only those", async () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit);
    const answers = ["a", "b", "c"].map((item) => settled(group.submit(item)));
    calls[0]?.resolve();
    await tick();
    const failure = new Error("connection terminated");
    calls[1]?.reject(failure);
    await tick();
    expect(answers.map((answer) => answer.error)).toEqual([undefined, failure, failure]);
    expect(answers[0]?.value).toBe("stored a");
    const later = settled(group.submit("d"));
    calls[2]?.resolve();
    await tick();
    expect(later.value).toBe("stored d");
  });

  it("refuses an item that waited past maxWaitMs without ever handing it to a commit", async () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit, { maxWaitMs: 20 });
    const first = settled(group.submit("stuck"));
    const waiting = settled(group.submit("waiting"));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(waiting.error).toBeInstanceOf(InboxBusyError);
    expect(first.done).toBe(false);
    calls[0]?.resolve();
    await tick();
    expect(first.value).toBe("stored stuck");
    expect(calls.map((call) => call.items)).toEqual([["stuck"]]);
  });

  it("treats a commit that answers for the wrong number of items as failed (no item is told it is stored)", async () => {
    const group = groupOf(async () => ["only one"]);
    const first = group.submit("a");
    const answers = [group.submit("b"), group.submit("c")];
    await expect(first).resolves.toBe("only one");
    for (const answer of answers) await expect(answer).rejects.toThrow(/2 items/);
  });

  it("refuses the items of a commit that outlives maxCommitMs, frees its slot, and ignores its late outcome", async () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit, { maxCommitMs: 30 });
    const stuck = settled(group.submit("stuck"));
    const next = settled(group.submit("next"));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(stuck.error).toBeInstanceOf(InboxCommitTimeoutError);
    // The waiting item went in the slot the abandoned commit freed.
    expect(calls.map((call) => call.items)).toEqual([["stuck"], ["next"]]);
    calls[1]?.resolve();
    await tick();
    expect(next.value).toBe("stored next");
    // The database answers the abandoned commit after all: its item was already refused, and stays so.
    calls[0]?.resolve();
    await tick();
    expect(stuck.value).toBeUndefined();
    const after = settled(group.submit("after"));
    expect(calls.at(-1)?.items).toEqual(["after"]);
    calls.at(-1)?.resolve();
    await tick();
    expect(after.value).toBe("stored after");
  });

  it("does not refuse a commit that finishes within maxCommitMs", async () => {
    const { calls, commit } = manualCommit();
    const group = groupOf(commit, { maxCommitMs: 200 });
    const answer = settled(group.submit("a"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    calls[0]?.resolve();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(answer.error).toBeUndefined();
    expect(answer.value).toBe("stored a");
  });
});
