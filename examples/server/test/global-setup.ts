import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres } from "@agent-platform/embedded-postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** An initialised, empty PGlite data dir; tests copy it instead of paying initdb (seconds) each. */
    pgliteTemplateDir: string;
  }
}

export default async function setup(project: TestProject) {
  const root = await mkdtemp(join(tmpdir(), "server-pglite-template-"));
  const dataDir = join(root, "data");
  const embedded = await startEmbeddedPostgres({ dataDir });
  await embedded.sql`SELECT 1`;
  await embedded.stop();
  project.provide("pgliteTemplateDir", dataDir);
  return async () => {
    await rm(root, { recursive: true, force: true });
  };
}
