import { describeExportsSnapshot } from "@agent-platform/test-support/exports-snapshot";

// Every entry point's exports against the reviewed test/exports.json; a change is regenerated, and reviewed, with
// `pnpm build && UPDATE_EXPORTS=1 npx vitest run exports.test` at the repository root.
describeExportsSnapshot(`${import.meta.dirname}/..`);
