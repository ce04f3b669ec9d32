import { InboxBusyError, InboxCommitTimeoutError } from "../errors.js";

export interface GroupCommitOptions<T, R> {
  /**
   * Makes every item durable in one statement (one transaction) and returns one result per item, in order.
   * It either resolves (everything committed) or rejects (nothing committed): each item is answered from it.
   */
  commit(items: T[]): Promise<R[]>;
  /** An item's size against `maxBatchSize` (e.g. its message count); at least 1 is counted. */
  sizeOf(item: T): number;
  /** Most size per commit; an item larger than this still goes, alone. */
  maxBatchSize: number;
  /** Commits in flight at once; items arriving while all are busy form the next batch. */
  maxInFlight: number;
  /**
   * Longest an item may wait for its commit to start. Past it the item is refused with InboxBusyError, having
   * written nothing, so a database that stalls turns into quick 503s instead of a queue that grows without end.
   */
  maxWaitMs: number;
  /**
   * Longest a commit may take once started. Past it its items are refused with InboxCommitTimeoutError and its
   * slot is free for the next batch: a database that was killed, frozen or cut off answers nothing, and its
   * deliveries must not wait for the connection to notice. The abandoned commit may still complete later; its
   * items were refused, so their senders deliver them again and find them stored (duplicates, not losses).
   */
  maxCommitMs?: number | undefined;
}

interface Waiting<T, R> {
  item: T;
  size: number;
  deadline: number;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: an item submitted while a commit slot is free is committed at once, alone (no added latency
 * when idle); items submitted while every slot is busy queue up and go together in the next commit, each
 * answered only when the commit holding it has finished. FIFO, so no item is overtaken by a later one.
 */
export class GroupCommit<T, R> {
  private readonly queue: Waiting<T, R>[] = [];
  private inFlight = 0;
  private expiryTimer: NodeJS.Timeout | undefined;
  /** The item the expiry timer is set for: re-armed only when the head of the queue changes. */
  private expiryFor: Waiting<T, R> | undefined;

  constructor(private readonly options: GroupCommitOptions<T, R>) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        item,
        size: Math.max(1, this.options.sizeOf(item)),
        deadline: performance.now() + this.options.maxWaitMs,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  /** Starts commits while slots are free and items wait; arms the expiry of what must keep waiting. */
  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      this.start(this.takeBatch());
    }
    this.armExpiry();
  }

  private takeBatch(): Waiting<T, R>[] {
    let size = 0;
    let count = 0;
    for (const waiting of this.queue) {
      if (count > 0 && size + waiting.size > this.options.maxBatchSize) break;
      size += waiting.size;
      count++;
    }
    return this.queue.splice(0, count);
  }

  private start(batch: Waiting<T, R>[]): void {
    this.inFlight++;
    let settled = false;
    const settle = (results: R[] | undefined, error: unknown) => {
      // Once: the deadline and the commit's own outcome race, and whichever comes first answers the items.
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      this.inFlight--;
      // The next commit first: answering this batch's items runs their continuations (each writes its HTTP
      // response), and the waiting items' commit should not queue behind that work; it goes to the database
      // first and the answers are written while it is being committed.
      this.pump();
      batch.forEach((waiting, index) => {
        if (results === undefined) waiting.reject(error);
        else waiting.resolve(results[index] as R);
      });
    };
    const { maxCommitMs } = this.options;
    const deadline =
      maxCommitMs === undefined
        ? undefined
        : setTimeout(() => settle(undefined, new InboxCommitTimeoutError(maxCommitMs)), maxCommitMs);
    // Items waiting for the answer keep their requests (and so the process) alive; the timer alone must not.
    deadline?.unref();
    // commit() is called synchronously here; a throw is a rejection like any other.
    let committing: Promise<R[]>;
    try {
      committing = this.options.commit(batch.map((waiting) => waiting.item));
    } catch (error) {
      committing = Promise.reject(error);
    }
    committing.then(
      (results) => {
        if (results.length === batch.length) settle(results, undefined);
        else
          settle(undefined, new Error(`commit returned ${results.length} results for ${batch.length} items`));
      },
      (error: unknown) => settle(undefined, error),
    );
  }

  /** One timer, for the oldest waiting item (the queue is in deadline order): it and any expired after it go. */
  private armExpiry(): void {
    const oldest = this.queue[0];
    if (oldest === this.expiryFor) return;
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    this.expiryFor = oldest;
    if (oldest === undefined) return;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = undefined;
        this.expiryFor = undefined;
        const now = performance.now();
        while (this.queue[0] !== undefined && this.queue[0].deadline <= now) {
          this.queue.shift()?.reject(new InboxBusyError(this.options.maxWaitMs));
        }
        this.armExpiry();
      },
      Math.max(0, oldest.deadline - performance.now()),
    );
    // Waiting items keep their requests (and so the process) alive; the timer alone must not.
    this.expiryTimer.unref();
  }
}
