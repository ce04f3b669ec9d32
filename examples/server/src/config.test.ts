import { resolve } from "node:path";
import { ConfigError } from "@agent-platform/common";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 7777,
      dataDir: resolve("./.data"),
      env: "development",
      logLevel: "info",
      databases: [],
      platformId: "agent-platform",
      shutdownTimeoutMs: 10_000,
      requestTimeoutMs: 10_000,
      migrateRetry: { attempts: 4, maxMs: 10_000 },
      jwt: {
        verificationKey: undefined,
        verifyAudience: false,
        authorization: true,
        tokenSource: "header",
      },
    });
  });

  it("registers DATABASE_URL as default and DATABASES by id", () => {
    const config = loadConfig({
      DATABASE_URL: "postgres://u:p@h/db",
      DATABASES: " analytics=postgresql://h/a?sslmode=require , b-2=postgres://h/b",
    });
    expect(config.databases).toEqual([
      { id: "default", url: "postgres://u:p@h/db" },
      { id: "analytics", url: "postgresql://h/a?sslmode=require" },
      { id: "b-2", url: "postgres://h/b" },
    ]);
  });

  it("reads the migrator's retries", () => {
    expect(loadConfig({ MIGRATE_RETRY_ATTEMPTS: "1", MIGRATE_RETRY_MAX_MS: " 250 " }).migrateRetry).toEqual({
      attempts: 1,
      maxMs: 250,
    });
    expect(loadConfig({ MIGRATE_RETRY_ATTEMPTS: "100", MIGRATE_RETRY_MAX_MS: "0" }).migrateRetry).toEqual({
      attempts: 100,
      maxMs: 0,
    });
  });

  it("reads JWT variables, lists and booleans", () => {
    const config = loadConfig({
      JWT_VERIFICATION_KEY: "-----BEGIN PUBLIC KEY-----\\nabc\\n-----END PUBLIC KEY-----",
      JWT_ALGORITHM: "ES256",
      JWT_AUDIENCE: "a, b",
      JWT_VERIFY_AUDIENCE: "yes",
      JWT_AUTHORIZATION: "false",
      JWT_TOKEN_SOURCE: "BOTH",
      JWT_COOKIE_NAME: "jwt",
      JWT_ISSUER: "https://issuer",
      JWT_ALLOWED_ORIGINS: "https://a.example, http://localhost:3000",
      PLATFORM_ID: "prod-eu",
    });
    expect(config.jwt).toMatchObject({
      // Passed to jwt-rbac as given: it unescapes PEM text itself (and only PEM text).
      verificationKey: "-----BEGIN PUBLIC KEY-----\\nabc\\n-----END PUBLIC KEY-----",
      algorithm: "ES256",
      audience: ["a", "b"],
      verifyAudience: true,
      authorization: false,
      tokenSource: "both",
      cookieName: "jwt",
      issuer: ["https://issuer"],
      allowedOrigins: ["https://a.example", "http://localhost:3000"],
    });
    expect(config.platformId).toBe("prod-eu");
  });

  it.each([
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ PLATFORM_ENV: "prod" }, "PLATFORM_ENV"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ DATABASE_URL: "mysql://h/db" }, "DATABASE_URL"],
    [{ DATABASES: "nourl" }, "DATABASES"],
    [{ DATABASES: "all=postgres://h/a" }, "DATABASES"],
    [{ DATABASES: "bad id=postgres://h/a" }, "DATABASES"],
    [{ DATABASES: "a=postgres://h/a,a=postgres://h/b" }, "DATABASES"],
    [{ DATABASES: "a=http://h/a" }, "DATABASES"],
    [{ DATABASES: "default=postgres://h/a", DATABASE_URL: "postgres://h/b" }, "DATABASES"],
    [{ JWT_ALGORITHM: "none" }, "JWT_ALGORITHM"],
    [{ JWT_VERIFY_AUDIENCE: "maybe" }, "JWT_VERIFY_AUDIENCE"],
    [{ JWT_AUTHORIZATION: "2" }, "JWT_AUTHORIZATION"],
    [{ JWT_TOKEN_SOURCE: "query" }, "JWT_TOKEN_SOURCE"],
    [{ JWT_JWKS_URL: "file:///etc/jwks.json" }, "JWT_JWKS_URL"],
    [{ SHUTDOWN_TIMEOUT_MS: "-1" }, "SHUTDOWN_TIMEOUT_MS"],
    [{ MIGRATE_RETRY_ATTEMPTS: "0" }, "MIGRATE_RETRY_ATTEMPTS"],
    [{ MIGRATE_RETRY_ATTEMPTS: "101" }, "MIGRATE_RETRY_ATTEMPTS"],
    [{ MIGRATE_RETRY_ATTEMPTS: "1e1" }, "MIGRATE_RETRY_ATTEMPTS"],
    [{ MIGRATE_RETRY_MAX_MS: "3600001" }, "MIGRATE_RETRY_MAX_MS"],
    // One env parser for the server and the messaging channel: no exponents, hex or signs anywhere.
    [{ PORT: "1e3" }, "PORT"],
    [{ SHUTDOWN_TIMEOUT_MS: "0x10" }, "SHUTDOWN_TIMEOUT_MS"],
    [{ AGENT_TIMEOUT_MS: "1e3" }, "AGENT_TIMEOUT_MS"],
    [{ MESSAGING_WORKER_POLL_MS: "0x10" }, "MESSAGING_WORKER_POLL_MS"],
    [{ MESSAGING_MAX_ATTEMPTS: "+5" }, "MESSAGING_MAX_ATTEMPTS"],
    [{ MESSAGING_ORDERING: "fifo" }, "MESSAGING_ORDERING"],
    [{ MESSAGING_RETENTION_DONE_DAYS: "-1" }, "MESSAGING_RETENTION_DONE_DAYS"],
    [{ MESSAGING_RETENTION_DONE_DAYS: "30d" }, "MESSAGING_RETENTION_DONE_DAYS"],
    [{ MESSAGING_RETENTION_FAILED_DAYS: "36501" }, "MESSAGING_RETENTION_FAILED_DAYS"],
    [{ MESSAGING_RETENTION_FAILED_DAYS: "1.5" }, "MESSAGING_RETENTION_FAILED_DAYS"],
    [{ WHATSAPP_SKIP_SIGNATURE_VALIDATION: "maybe" }, "WHATSAPP_SKIP_SIGNATURE_VALIDATION"],
    [{ WHATSAPP_PACING_PER_CHAT_MS: "-1" }, "WHATSAPP_PACING_PER_CHAT_MS"],
    [{ WHATSAPP_PACING_PER_SECOND: "10001" }, "WHATSAPP_PACING_PER_SECOND"],
    [{ SLACK_PACING_PER_CHAT_MS: "1s" }, "SLACK_PACING_PER_CHAT_MS"],
    [{ SLACK_PACING_PER_SECOND: "1.5" }, "SLACK_PACING_PER_SECOND"],
    [{ TELEGRAM_PACING_PER_CHAT_MS: "3600001" }, "TELEGRAM_PACING_PER_CHAT_MS"],
    [{ TELEGRAM_PACING_PER_SECOND: "thirty" }, "TELEGRAM_PACING_PER_SECOND"],
  ])("rejects %j naming %s", (env, variable) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${variable}: `));
  });

  it("reads CORS_ALLOWED_ORIGINS: exact origins, trimmed, once each; none by default", () => {
    expect(loadConfig({}).corsAllowedOrigins).toEqual([]);
    expect(
      loadConfig({
        CORS_ALLOWED_ORIGINS: " https://ui.example.com, http://127.0.0.1:5173,https://ui.example.com",
      }).corsAllowedOrigins,
    ).toEqual(["https://ui.example.com", "http://127.0.0.1:5173"]);
    expect(loadConfig({ CORS_ALLOWED_ORIGINS: "*" }).corsAllowedOrigins).toEqual(["*"]);
  });

  it.each([
    ["https://ui.example.com/", /write 'https:\/\/ui.example.com'/],
    ["https://ui.example.com/app", /write 'https:\/\/ui.example.com'/],
    ["https://UI.example.com", /write 'https:\/\/ui.example.com'/],
    ["https://ui.example.com:443", /write 'https:\/\/ui.example.com'/],
    ["https://ui.example.com?x=1", /not an exact origin/],
    ["ui.example.com", /not an http\(s\) origin/],
    ["null", /not an http\(s\) origin/],
    ["file:///tmp/x", /not an http\(s\) origin/],
    ["https://*.example.com", /has no wildcard; list each origin/],
    ["*,https://ui.example.com", /'\*' \(any origin\) stands alone/],
  ])("refuses CORS_ALLOWED_ORIGINS=%j in one line naming the fix", (value, message) => {
    const problems = problemsOf({ CORS_ALLOWED_ORIGINS: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^CORS_ALLOWED_ORIGINS: /);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain("\n");
  });

  it.each(["cookie", "both"])("refuses CORS_ALLOWED_ORIGINS=* with JWT_TOKEN_SOURCE=%s", (source) => {
    const problems = problemsOf({ CORS_ALLOWED_ORIGINS: "*", JWT_TOKEN_SOURCE: source });
    expect(problems).toEqual([
      expect.stringMatching(/^CORS_ALLOWED_ORIGINS: '\*' cannot be used with JWT_TOKEN_SOURCE=/),
    ]);
  });

  it("reads booleans and empty values the same way for the server and the messaging channel", () => {
    const config = loadConfig({
      JWT_VERIFY_AUDIENCE: "on",
      WHATSAPP_SKIP_SIGNATURE_VALIDATION: "ON",
      PORT: "",
      AGENT_TIMEOUT_MS: "",
      MESSAGING_WORKER_CONCURRENCY: " ",
    });
    expect(config.jwt.verifyAudience).toBe(true);
    expect(config.messaging.WHATSAPP_SKIP_SIGNATURE_VALIDATION).toBe(true);
    // Empty means unset: the default, not 0.
    expect(config.port).toBe(7777);
    expect(config.messaging.AGENT_TIMEOUT_MS).toBe(30_000);
    expect(config.messaging.MESSAGING_WORKER_CONCURRENCY).toBe(4);
    expect(config.messaging.MESSAGING_ORDERING).toBe("conversation");
    expect(config.messaging.MESSAGING_RETENTION_DONE_DAYS).toBe(30);
    expect(config.messaging.MESSAGING_RETENTION_FAILED_DAYS).toBe(90);
    // The chat products' documented limits: WhatsApp's pair rate and default throughput, Slack's and Telegram's.
    expect(config.messaging.WHATSAPP_PACING_PER_CHAT_MS).toBe(6_000);
    expect(config.messaging.WHATSAPP_PACING_PER_SECOND).toBe(80);
    expect(config.messaging.SLACK_PACING_PER_CHAT_MS).toBe(1_000);
    expect(config.messaging.SLACK_PACING_PER_SECOND).toBe(0);
    expect(config.messaging.TELEGRAM_PACING_PER_CHAT_MS).toBe(1_000);
    expect(config.messaging.TELEGRAM_PACING_PER_SECOND).toBe(30);
  });

  it("keeps the two characters \\n in an HS* secret", () => {
    expect(loadConfig({ JWT_VERIFICATION_KEY: "abc\\ndef" }).jwt.verificationKey).toBe("abc\\ndef");
  });

  it("reports every bad variable at once and never echoes a database password", () => {
    const problems = problemsOf({ PORT: "x", DATABASES: "a=mysql://user:secret@h/a,b:c=:d" });
    expect(problems.some((p) => p.startsWith("PORT: "))).toBe(true);
    expect(problems.filter((p) => p.startsWith("DATABASES: "))).toHaveLength(2);
    expect(problems.join("\n")).not.toContain("secret");
  });

  describe("JWT_DPOP with PUBLIC_URL, PLATFORM_ENV and service tokens", () => {
    const TOKENS = JSON.stringify([{ name: "ci", sha256: "a".repeat(64), scopes: ["config:read"] }]);
    it.each([
      [
        "production without PUBLIC_URL",
        { JWT_DPOP: "allowed", PLATFORM_ENV: "production" },
        "JWT_DPOP=allowed with PLATFORM_ENV=production requires PUBLIC_URL",
      ],
      [
        "required, production, without PUBLIC_URL",
        { JWT_DPOP: "required", PLATFORM_ENV: "production" },
        "JWT_DPOP=required with PLATFORM_ENV=production requires PUBLIC_URL",
      ],
      [
        "a PUBLIC_URL with a path",
        { JWT_DPOP: "allowed", PUBLIC_URL: "https://api.example.com/v1" },
        "PUBLIC_URL: DPoP proofs name this server's origin",
      ],
      [
        "required with service tokens",
        { JWT_DPOP: "required", PLATFORM_SERVICE_TOKENS: TOKENS },
        "PLATFORM_SERVICE_TOKENS: service-account tokens are bearer tokens, which JWT_DPOP=required refuses",
      ],
    ])("refuses %s in one line naming the fix", (_name, env, start) => {
      const problems = problemsOf(env);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(start);
      expect(problems[0]).not.toContain("\n");
    });

    it.each([
      [
        "production with PUBLIC_URL",
        { JWT_DPOP: "required", PLATFORM_ENV: "production", PUBLIC_URL: "https://api.example.com/" },
      ],
      ["development without PUBLIC_URL", { JWT_DPOP: "required" }],
      ["allowed with service tokens", { JWT_DPOP: "allowed", PLATFORM_SERVICE_TOKENS: TOKENS }],
      [
        "off in production without PUBLIC_URL",
        { JWT_DPOP: "off", PLATFORM_ENV: "production", PLATFORM_SERVICE_TOKENS: TOKENS },
      ],
    ])("accepts %s", (_name, env) => {
      expect(() => loadConfig(env)).not.toThrow();
    });
  });
});
