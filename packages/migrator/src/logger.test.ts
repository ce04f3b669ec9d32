import { describe, expect, it } from "vitest";
import { capturedConsole, levelsOnlyLogger } from "../../common/test/plain-loggers.js";
import { tableMigration, useBackend, useFreshSchema } from "../test/support.js";
import { createMigrator } from "./migrator.js";

describe("the logger option takes loggers without child", () => {
  const current = useBackend("pglite");
  const freshSchema = useFreshSchema(current);
  const migrations = [tableMigration("1.0.0", "users")];

  it("writes each event to console as (fields, message)", async () => {
    const { console, output } = capturedConsole();
    const { sql } = current();
    await createMigrator({ sql, migrations, schema: freshSchema(), logger: console }).migrate();
    expect(output()).toMatch(/event: 'migrated',\s+version: '1\.0\.0'[\s\S]*migration migrated/);
  });

  it("writes each event to a logger with the four levels only", async () => {
    const { logger, calls } = levelsOnlyLogger();
    const { sql } = current();
    await createMigrator({ sql, migrations, schema: freshSchema(), logger }).migrate();
    expect(calls).toContainEqual({
      level: "info",
      args: [expect.objectContaining({ event: "migrated", version: "1.0.0" }), "migration migrated"],
    });
  });
});
