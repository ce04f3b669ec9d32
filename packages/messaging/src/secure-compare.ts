import { createHash, timingSafeEqual } from "node:crypto";

/** Constant-time string equality; hashing first makes the comparison independent of both lengths. */
export function secureEquals(a: string, b: string): boolean {
  const digestA = createHash("sha256").update(a).digest();
  const digestB = createHash("sha256").update(b).digest();
  return timingSafeEqual(digestA, digestB);
}
