import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SignJWT } from "jose";

/** The development signing key, generated once into the data dir and reused by every later start. */
export interface DevKey {
  readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
  readonly path: string;
  readonly created: boolean;
}

export const DEV_KEY_ALGORITHM = "ES256";
export const DEV_TOKEN_SCOPE = "platform:admin";
export const DEV_TOKEN_TTL_S = 24 * 60 * 60;

function fromPrivatePem(pem: string, path: string, created: boolean): DevKey {
  const privateKey = createPrivateKey(pem);
  const publicKeyPem = createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString();
  return { privateKey, publicKeyPem, path, created };
}

export async function loadOrCreateDevKey(dataDir: string): Promise<DevKey> {
  const path = join(dataDir, "dev-jwt-es256.pem");
  try {
    return fromPrivatePem(await readFile(path, "utf8"), path, false);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  // Written to a temporary file and linked into place: the key file is never seen half-written, and a
  // concurrent first start keeps whichever key was linked first.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, pem, { mode: 0o600 });
  try {
    await link(temporary, path);
    return fromPrivatePem(pem, path, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return fromPrivatePem(await readFile(path, "utf8"), path, false);
  } finally {
    await unlink(temporary);
  }
}

export interface DevToken {
  readonly token: string;
  readonly expiresAt: Date;
}

export interface DevTokenClaims {
  readonly audience: string | string[];
  readonly issuer: string | undefined;
  /** Default: the admin scope, as printed at startup. */
  readonly scopes?: readonly string[];
  /** Default: `dev-admin`. */
  readonly subject?: string;
  /** Default: 24 h. */
  readonly ttlSeconds?: number;
}

/** The audience and issuer a server with this configuration expects, so its development tokens pass. */
export function devTokenAudience(config: {
  platformId: string;
  jwt: { audience: string[] | undefined; issuer: string[] | undefined };
}): { audience: string | string[]; issuer: string | undefined } {
  return { audience: config.jwt.audience ?? config.platformId, issuer: config.jwt.issuer?.[0] };
}

export async function signDevToken(key: DevKey, claims: DevTokenClaims): Promise<DevToken> {
  const issuedAt = Math.floor(Date.now() / 1000);
  const expiresAt = issuedAt + (claims.ttlSeconds ?? DEV_TOKEN_TTL_S);
  let jwt = new SignJWT({ scopes: [...(claims.scopes ?? [DEV_TOKEN_SCOPE])] })
    .setProtectedHeader({ alg: DEV_KEY_ALGORITHM, typ: "JWT" })
    .setSubject(claims.subject ?? "dev-admin")
    .setAudience(claims.audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt);
  if (claims.issuer !== undefined) jwt = jwt.setIssuer(claims.issuer);
  return { token: await jwt.sign(key.privateKey), expiresAt: new Date(expiresAt * 1000) };
}
