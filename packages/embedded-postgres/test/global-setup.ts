import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** An initialised, closed PGlite data directory that test files copy instead of running initdb each. */
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  const root = mkdtempSync(join(tmpdir(), "migrator-template-"));
  const dataDir = join(root, "data");
  const db = await PGlite.create(dataDir);
  await db.close();
  project.provide("pgliteTemplate", dataDir);
  return () => rmSync(root, { recursive: true, force: true });
}
