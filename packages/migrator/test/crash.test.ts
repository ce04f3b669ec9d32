import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { createMigrator } from "../src/migrator.js";
import { crashMigrations } from "./fixtures/crash-migrations.js";
import { backends, historyVersions, tablesIn, useFreshSchema } from "./support.js";

const child = fileURLToPath(new URL("./fixtures/crash-child.ts", import.meta.url));

/** Starts the child migrator and resolves once its migration 1.2.0 has done DDL and hangs. */
function startHangingChild(url: string, schema: string) {
  const proc = spawn(process.execPath, ["--import", "tsx", child, url, schema], {
    env: { ...process.env, MIGRATOR_HANG_AFTER_DDL: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const midRun = new Promise<void>((resolve, reject) => {
    proc.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("mid-run")) resolve();
    });
    proc.on("exit", (code) => reject(new Error(`child exited with ${code} before mid-run: ${stderr}`)));
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.on("exit", (_code, signal) => resolve(signal)),
  );
  return { proc, midRun, exited };
}

async function waitForSessionGone(
  sql: ReturnType<ReturnType<typeof backends>[number]["current"]>["sql"],
  name: string,
) {
  for (let i = 0; i < 200; i++) {
    const [row] = await sql`select count(*)::int as n from pg_stat_activity where application_name = ${name}`;
    if (row?.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`session ${name} is still there`);
}

describe.each(backends())("a migrator process killed mid-run on $kind", ({ current }) => {
  const freshSchema = useFreshSchema(current);

  it("leaves the schema at the pre-run version, and the next run completes", async () => {
    const { sql, url } = current();
    const schema = freshSchema();
    const migrator = createMigrator({ sql, migrations: crashMigrations, schema, lockTimeoutMs: 20_000 });
    await migrator.migrate({ to: "1.0.0" });

    const { proc, midRun, exited } = startHangingChild(url, schema);
    await midRun;
    proc.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");

    // Once the server has dropped the dead session, nothing of its run is visible.
    if (current().kind === "postgres") await waitForSessionGone(sql, `crash-child-${schema}`);
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0"]);
    expect(await tablesIn(sql, schema)).toEqual(["schema_migrations", "users"]);

    // The next run waits for the dead session's lock to go, sees 1.0.0 and applies the rest once.
    const result = await migrator.migrate();
    expect(result).toMatchObject({
      from: "1.0.0",
      to: "1.2.0",
      direction: "up",
      applied: ["1.1.0", "1.2.0"],
    });
    expect(await historyVersions(sql, schema)).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    expect(await tablesIn(sql, schema)).toEqual(["messages", "schema_migrations", "sessions", "users"]);
    const [row] = await sql`select count(*)::int as n from ${sql(schema)}.users`;
    expect(row?.n).toBe(1);
  });
});
