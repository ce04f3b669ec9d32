/**
 * A body stream's bytes, counted chunk by chunk and cut off as soon as they pass `maxBytes`: an endless or
 * lying body is never buffered past the cap. Returns null (after cancelling the stream) when it is over;
 * the caller turns that into its own error, and checks a declared Content-Length first when it has one.
 */
export async function readStreamWithin(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | null> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
