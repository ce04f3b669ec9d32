import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import type { TestProject } from "vitest/node";
import { run, userEnv } from "./exec.js";
import { installedVersion, publicPackageDirs, readPackageJson } from "./workspace.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The consumer project: outside the workspace, the packed packages installed with npm. */
    consumerDir: string;
    packageNames: string[];
    /** Signs the ES256 tokens that the apps verify with the public half (in keys.ts). */
    es256PrivateJwk: JWK;
    hs256Secret: string;
    /** The secrets fixture/webhooks.ts checks deliveries against (signed by src/webhooks.ts). */
    messaging: MessagingSecrets;
  }
}

export const ES256_KID = "consumer-es256";

export interface MessagingSecrets {
  whatsAppAppSecret: string;
  whatsAppVerifyToken: string;
  slackSigningSecret: string;
  telegramSecretToken: string;
}
const fixtureDir = new URL("../fixture/", import.meta.url);
const workspaceDir = new URL("..", import.meta.url).pathname;
/** What the consumer project builds and serves with, at the versions this workspace pins for it. */
const TOOLS = ["typescript", "@types/node", "@hono/node-server"];

/** Packs every public package and installs the tarballs into a fresh npm project, as a user would. */
export default async function setup(project: TestProject): Promise<() => void> {
  const started = performance.now();
  // Under the OS temp dir, so no workspace node_modules or .npmrc up the tree can stand in for the install.
  const consumerDir = mkdtempSync(join(tmpdir(), "agent-platform-consumer-"));
  const tarballDir = join(consumerDir, "tarballs");
  const manifest = JSON.parse(readFileSync(new URL("package.json", fixtureDir), "utf8"));
  manifest.dependencies = {};
  manifest.devDependencies = Object.fromEntries(
    TOOLS.map((tool) => [tool, installedVersion(workspaceDir, tool)]),
  );
  const packageNames: string[] = [];
  const tarballs = await Promise.all(
    publicPackageDirs().map(async (dir) => {
      // pnpm pack rewrites workspace: ranges to versions; its last line is the tarball's path.
      const output = await run("pnpm", ["pack", "--pack-destination", tarballDir], dir);
      return { dir, packed: readPackageJson(dir), tarball: output.trim().split("\n").at(-1) };
    }),
  );
  for (const {
    dir,
    packed: { name, peerDependencies = {} },
    tarball,
  } of tarballs) {
    manifest.dependencies[name] = `file:${tarball}`;
    packageNames.push(name);
    // Peers, optional ones too, at the versions the workspace tests with: every subpath must then load.
    for (const peer of Object.keys(peerDependencies))
      manifest.dependencies[peer] = installedVersion(dir, peer);
  }
  cpSync(fixtureDir, consumerDir, { recursive: true });
  writeFileSync(join(consumerDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);

  const { publicKey, privateKey } = await generateKeyPair("ES256", { extractable: true });
  const es256PublicJwk = { ...(await exportJWK(publicKey)), kid: ES256_KID, alg: "ES256" };
  const hs256Secret = randomBytes(32).toString("base64url");
  const secret = () => randomBytes(24).toString("base64url");
  const messaging: MessagingSecrets = {
    whatsAppAppSecret: secret(),
    whatsAppVerifyToken: secret(),
    slackSigningSecret: secret(),
    telegramSecretToken: secret(),
  };
  writeFileSync(
    join(consumerDir, "keys.ts"),
    `// Written by the consumer tests' setup for this run.\nexport const keys = ${JSON.stringify({ es256: es256PublicJwk, hs256: hs256Secret, messaging })};\n`,
  );

  // npm's own cache (~/.npm) is shared across runs, so after the first run nothing is downloaded.
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], consumerDir, userEnv());
  console.log(
    `consumer project ready in ${((performance.now() - started) / 1000).toFixed(1)} s: ${consumerDir}`,
  );

  project.provide("consumerDir", consumerDir);
  project.provide("packageNames", packageNames);
  project.provide("es256PrivateJwk", { ...(await exportJWK(privateKey)), kid: ES256_KID, alg: "ES256" });
  project.provide("hs256Secret", hs256Secret);
  project.provide("messaging", messaging);
  return () => rmSync(consumerDir, { recursive: true, force: true });
}
