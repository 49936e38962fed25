// Run only by test/vitest-watchdog.test.ts: a test stuck in a synchronous loop, beside one that passes.
import { expect, it } from "vitest";

it("passes first", () => {
  expect(1 + 1).toBe(2);
});

it("never yields to its event loop", () => {
  let spins = 0;
  for (;;) spins += 1;
});
