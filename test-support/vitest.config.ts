import { defineConfig } from "vitest/config";

// Repository-wide checks over every package's sources and docs: import circles, relative links, user-facing text.
export default defineConfig({
  test: {
    name: "@agent-platform/test-support",
    include: ["test/**/*.test.ts"],
  },
});
