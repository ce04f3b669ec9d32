/**
 * The ROCA fingerprint (CVE-2017-15361; Nemec, Sys, Svenda, Klinec, Matyas, "The Return of
 * Coppersmith's Attack", CCS 2017). Infineon's RSALib made primes p = k·M + (65537^a mod M), with M a
 * primorial, so for each small prime r dividing M, p mod r lies in the subgroup of (Z/rZ)* generated
 * by 65537, and so does n = p·q mod r. A random modulus passes that test for all of the primes below
 * with negligible probability; such keys can be factored in CPU-months to years, so they are refused.
 */

const GENERATOR = 65537;
/** M for every RSALib key size is divisible by the first 39 primes (2..167: M of 512-bit keys). */
const LARGEST_PRIME = 167;

/** Each small prime with the residues the generator reaches modulo it. */
interface Fingerprint {
  readonly prime: number;
  readonly bigPrime: bigint;
  readonly subgroup: ReadonlySet<number>;
}

function primesUpTo(limit: number): number[] {
  const composite = new Uint8Array(limit + 1);
  const primes: number[] = [];
  for (let i = 2; i <= limit; i++) {
    if (composite[i]) continue;
    primes.push(i);
    for (let j = i * i; j <= limit; j += i) composite[j] = 1;
  }
  return primes;
}

function subgroupOf(prime: number): Set<number> {
  const generator = GENERATOR % prime;
  const members = new Set<number>();
  for (let element = 1; !members.has(element); element = (element * generator) % prime) members.add(element);
  return members;
}

let fingerprints: readonly Fingerprint[] | undefined;

/** Built on first use (a key import), not at module load: a few hundred small multiplications. */
function table(): readonly Fingerprint[] {
  fingerprints ??= primesUpTo(LARGEST_PRIME).map((prime) => ({
    prime,
    bigPrime: BigInt(prime),
    subgroup: subgroupOf(prime),
  }));
  return fingerprints;
}

/** Whether the modulus `n` has the ROCA fingerprint. */
export function hasRocaFingerprint(n: bigint): boolean {
  return table().every(({ bigPrime, subgroup }) => subgroup.has(Number(n % bigPrime)));
}
