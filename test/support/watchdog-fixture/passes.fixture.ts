// Run only by test/vitest-watchdog.test.ts: a file that still runs when another's process is killed.
import { expect, it } from "vitest";

it("waits on its event loop and passes", async () => {
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  expect(2 + 2).toBe(4);
});
