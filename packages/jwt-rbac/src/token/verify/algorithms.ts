import { type JwtAlgorithm, SUPPORTED_ALGORITHMS } from "../../options.js";

export type KeyFamily = "oct" | "RSA" | "EC" | "OKP";

const SUPPORTED: ReadonlySet<string> = new Set(SUPPORTED_ALGORITHMS);

export function isSupportedAlgorithm(alg: string): alg is JwtAlgorithm {
  return SUPPORTED.has(alg);
}

export function isHmac(alg: JwtAlgorithm): boolean {
  return alg.startsWith("HS");
}

export function keyFamily(alg: JwtAlgorithm): KeyFamily {
  if (alg.startsWith("HS")) return "oct";
  if (alg.startsWith("RS") || alg.startsWith("PS")) return "RSA";
  if (alg.startsWith("ES")) return "EC";
  return "OKP";
}

/** SHA-2 size in bits for every algorithm but EdDSA. */
export function hashBits(alg: JwtAlgorithm): 256 | 384 | 512 {
  if (alg.endsWith("384")) return 384;
  if (alg.endsWith("512")) return 512;
  return 256;
}
