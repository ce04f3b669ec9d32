import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "@agent-platform/common",
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
  },
});
