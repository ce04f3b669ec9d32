import { afterEach, describe, expect, it } from "vitest";
import { ABSENT_PROVIDER_RECHECK, type Tracer, tracerFor } from "../src/tracing.js";

// Where every copy of @opentelemetry/api 1.x keeps its registrations (what an SDK's register() writes).
const GLOBAL = Symbol.for("opentelemetry.js.api.1");
type Registry = { version: string; trace?: { getTracer(name: string, version?: string): Tracer } };
const globals = globalThis as { [GLOBAL]?: Registry };

function provider(label: string) {
  const asked: string[] = [];
  const tracer = { label, startActiveSpan: () => undefined } as unknown as Tracer;
  return {
    asked,
    tracer,
    getTracer(name: string) {
      asked.push(name);
      return tracer;
    },
  };
}

afterEach(() => {
  delete globals[GLOBAL];
});

describe("tracerFor: the tracer of the globally registered provider, found without importing the API", () => {
  it("a provider registered before the first operation is used by it; a replaced or removed one at once", () => {
    const first = provider("first");
    globals[GLOBAL] = { version: "1.9.0", trace: first };
    const tracer = tracerFor("@agent-platform/test", "1.0.0");
    expect(tracer()).toBe(first.tracer);
    expect(tracer()).toBe(first.tracer);
    // Asked once per provider, not per operation.
    expect(first.asked).toEqual(["@agent-platform/test"]);
    const second = provider("second");
    (globals[GLOBAL] as Registry).trace = second;
    expect(tracer()).toBe(second.tracer);
    delete (globals[GLOBAL] as Registry).trace;
    expect(tracer()).toBeUndefined();
  });

  it.each([0, 1, 17, ABSENT_PROVIDER_RECHECK - 1, ABSENT_PROVIDER_RECHECK, 3 * ABSENT_PROVIDER_RECHECK + 5])(
    "a provider registered after %i operations without one is used within ABSENT_PROVIDER_RECHECK more",
    (before) => {
      const tracer = tracerFor("@agent-platform/test");
      for (let index = 0; index < before; index++) expect(tracer()).toBeUndefined();
      const late = provider("late");
      globals[GLOBAL] = { version: "1.9.0", trace: late };
      const answers = Array.from({ length: ABSENT_PROVIDER_RECHECK }, () => tracer());
      expect(answers.at(-1)).toBe(late.tracer);
      // Once found, every operation has it.
      expect(answers.slice(answers.indexOf(late.tracer)).every((answer) => answer === late.tracer)).toBe(
        true,
      );
    },
  );

  it("a registration without a tracer provider (only the API's diag or context) is no tracer", () => {
    globals[GLOBAL] = { version: "1.9.0" };
    const tracer = tracerFor("@agent-platform/test");
    for (let index = 0; index < 3 * ABSENT_PROVIDER_RECHECK; index++) expect(tracer()).toBeUndefined();
  });
});
