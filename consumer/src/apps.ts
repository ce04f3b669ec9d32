import { type ChildProcess, spawn } from "node:child_process";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { createInterface } from "node:readline";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import { expect, inject } from "vitest";
import { ES256_KID } from "./setup.js";

/** A server process of the consumer project, and what it printed on its first line once listening. */
export interface Started<T> {
  readonly ready: T;
  stop(): void;
}

/**
 * Starts a server of the consumer project. It is ready when it prints its JSON line, or, for a server
 * that prints nothing (workerd), when it answers on `port`. Its stderr goes into the failure message.
 */
export function startServer<T>(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  port?: number,
): Promise<Started<T>> {
  const child: ChildProcess = spawn(command, args, { cwd: inject("consumerDir"), env, stdio: "pipe" });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const stop = () => child.kill();
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
    };
    const fail = (why: string) =>
      settle(() => {
        stop();
        reject(new Error(`${command} ${args.join(" ")}: ${why}\n${stderr}`));
      });
    const timer = setTimeout(() => fail("not listening after 30 s"), 30_000);
    child.once("exit", (code) => fail(`exited with ${code} before listening`));
    if (port === undefined) {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once("line", (line) => {
        try {
          const ready = JSON.parse(line) as T;
          settle(() => resolve({ ready, stop }));
        } catch {
          fail(`printed ${JSON.stringify(line)} instead of its JSON line`);
        }
      });
    } else {
      const poll = () =>
        fetch(`http://127.0.0.1:${port}/`).then(
          () => settle(() => resolve({ ready: { port } as T, stop })),
          () => settled || setTimeout(poll, 100),
        );
      poll();
    }
  });
}

/** A port nothing listens on right now, for a server that cannot report the one it bound. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
    server.once("error", reject);
  });
}

const CLAIMS = { sub: "user-1", tenant: "acme" };

async function es256Token(scopes: string[], privateJwk = inject("es256PrivateJwk")): Promise<string> {
  return new SignJWT({ ...CLAIMS, scopes })
    .setProtectedHeader({ alg: "ES256", kid: ES256_KID })
    .setExpirationTime("5m")
    .sign(await importJWK(privateJwk, "ES256"));
}

async function hs256Token(scopes: string[]): Promise<string> {
  return new SignJWT({ ...CLAIMS, scopes })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(inject("hs256Secret")));
}

/** An ES256 token with the app's kid, signed by a key the app does not know. */
async function forgedToken(): Promise<string> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  return es256Token(["reports:read"], { ...(await exportJWK(privateKey)), kid: ES256_KID });
}

function get(baseUrl: string, token?: string): Promise<Response> {
  return fetch(`${baseUrl}/reports`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
}

/**
 * What every consumer app must do with the shared options (fixture/options.ts): ES256 and HS256 tokens
 * with the scope pass with their claims, no token and a forged token are 401 with RFC 6750 challenges,
 * a token without the scope is 403. `verifier` says which build the runtime's export conditions chose.
 */
export async function expectEnforcedAuth(
  baseUrl: string,
  verifier: "node:crypto" | "webcrypto",
): Promise<void> {
  for (const token of [await es256Token(["reports:read"]), await hs256Token(["reports:read"])]) {
    const ok = await get(baseUrl, token);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ user: "user-1", tenant: "acme", verifier });
  }

  const missing = await get(baseUrl);
  expect(missing.status).toBe(401);
  expect(missing.headers.get("www-authenticate")).toBe('Bearer realm="platform"');

  const forged = await get(baseUrl, await forgedToken());
  expect(forged.status).toBe(401);
  expect(forged.headers.get("www-authenticate")).toBe(
    'Bearer realm="platform", error="invalid_token", error_description="Invalid token: signature verification failed"',
  );
  expect(await forged.json()).toEqual({
    detail: "Invalid token: signature verification failed",
    error_code: "UNAUTHENTICATED",
  });

  const unscoped = await get(baseUrl, await hs256Token(["reports:write"]));
  expect(unscoped.status).toBe(403);
  expect(unscoped.headers.get("www-authenticate")).toMatch(
    /^Bearer realm="platform", error="insufficient_scope", .*scope="reports:read"$/,
  );
}
