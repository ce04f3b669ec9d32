import { describe, expect, it } from "vitest";
import { readStreamWithin } from "../src/internal.js";

/** A stream of `chunks`, recording whether its reader cancelled it and how many chunks were pulled. */
function streamOf(chunks: Uint8Array[], endless = false) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[seen.pulled % chunks.length] as Uint8Array;
      seen.pulled++;
      controller.enqueue(chunk);
      if (!endless && seen.pulled === chunks.length) controller.close();
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("readStreamWithin", () => {
  it("joins the chunks of a body within the cap, the cap itself included", async () => {
    const { stream } = streamOf([Uint8Array.of(1, 2), Uint8Array.of(3), Uint8Array.of(4, 5)]);
    expect(await readStreamWithin(stream, 5)).toEqual(Uint8Array.of(1, 2, 3, 4, 5));
    expect(await readStreamWithin(streamOf([new Uint8Array(0)]).stream, 0)).toEqual(new Uint8Array(0));
  });

  it("stops an endless body one chunk past the cap and cancels it: null, nothing buffered beyond", async () => {
    const { stream, seen } = streamOf([new Uint8Array(1024)], true);
    expect(await readStreamWithin(stream, 10 * 1024)).toBeNull();
    expect(seen.cancelled).toBe(true);
    // Pulls run at most one chunk ahead of the reader (the default high-water mark of 1).
    expect(seen.pulled).toBeLessThanOrEqual(12);
  });

  it("refuses a body one byte over the cap", async () => {
    expect(await readStreamWithin(streamOf([new Uint8Array(3), new Uint8Array(3)]).stream, 5)).toBeNull();
  });
});
