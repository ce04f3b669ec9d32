import { ConfigError } from "@agent-platform/common";
import * as jwtRbac from "@agent-platform/jwt-rbac";
import * as messaging from "@agent-platform/messaging";
import * as migrator from "@agent-platform/migrator";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";

// The packages as the server loads them (their built dist, each importing @agent-platform/common).
function thrown(attempt: () => unknown): unknown {
  try {
    attempt();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("one ConfigError across the packages and the server", () => {
  it("every package re-exports the one class, not a copy of its own", () => {
    expect(jwtRbac.ConfigError).toBe(ConfigError);
    expect(migrator.ConfigError).toBe(ConfigError);
    expect(messaging.ConfigError).toBe(ConfigError);
  });

  it.each([
    ["jwt-rbac", () => jwtRbac.createJwtAuth({ algorithm: "none" })],
    ["migrator", () => migrator.createMigrator({ sql: {} as never, migrations: [] })],
    ["messaging", () => messaging.slack({ signingSecret: "", botToken: "" })],
    ["server", () => loadConfig({ PORT: "seventy" })],
  ])(
    "bad options of %s are that class, caught as one by another package's import of it",
    (component, attempt) => {
      const error = thrown(attempt);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error).toBeInstanceOf(jwtRbac.ConfigError);
      expect(error).toBeInstanceOf(migrator.ConfigError);
      expect(error).toMatchObject({ name: "ConfigError", code: "CONFIG_INVALID", component });
      expect(jwtRbac.isConfigError(error)).toBe(true);
    },
  );

  it("a logger of another shape is refused by each package, naming the option", async () => {
    // The migrator's logger before the shared shape: a function of events.
    const eventFunction = (() => {}) as never;
    expect(thrown(() => jwtRbac.createJwtAuth({ validate: false, logger: eventFunction }))).toMatchObject({
      component: "jwt-rbac",
      option: "logger",
    });
    expect(
      thrown(() =>
        migrator.createMigrator({
          sql: { reserve() {} } as never,
          migrations: [{ version: "1.0.0", name: "x", up() {} }],
          logger: eventFunction,
        }),
      ),
    ).toMatchObject({ component: "migrator", option: "logger" });
    await expect(
      messaging.createMessaging({ sql: {} as never, channels: [], logger: eventFunction }),
    ).rejects.toMatchObject({ component: "messaging", option: "logger" });
  });
});
