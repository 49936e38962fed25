/**
 * Issue 10's guarantee as a property: chained auto-compactions of generated agent sessions,
 * through createContextManager, in every format and every built-in preset (with parallel tool
 * calls, errors, pinned messages and occasional huge tool outputs). After every step, what
 * send() would send has no tool result without its call (and, for Anthropic, every tool_use is
 * answered in the next message), holds the newest user message and every pinned one, and after
 * a compaction fits the budget. The longer soak is in `npm run bench` (never-stuck.bench.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createContextManager } from "@compaction/context-manager";
import { FORMATS } from "@compaction/core/testing";
import { createSession } from "@compaction/transcript";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { PRESETS } from "./support/never-stuck.js";
import { playSession, stepArb } from "./support/session-steps.js";
import { tmpProject } from "./support/tmp-project.js";

const dir = mkdtempSync(join(tmpdir(), "chained-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs per preset x format; each plays 40 to 90 steps, so the whole table is a few thousand steps. */
const RUNS = 4;
const WINDOWS = [8_000, 16_000, 32_000] as const;
let total = { steps: 0, compactions: 0 };
afterAll(() => console.log(`chained compactions: ${total.steps} steps, ${total.compactions} compactions`));

describe.each(PRESETS)("chained auto-compactions (preset %s)", (preset) => {
  it.each(FORMATS)("%s: after every step the request is whole, holds the newest request, and fits after a compaction", async (format) => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...WINDOWS), fc.array(stepArb, { minLength: 40, maxLength: 90 }), async (contextWindow, steps) => {
        const cwd = tmpProject({
          ".compactionrc.json": JSON.stringify({ preset, adapter: format, contextWindow, reserveTokens: Math.floor(contextWindow / 8), tokenizer: { counter: "estimate" } }),
        });
        const manager = await createContextManager<unknown>({ cwd, messages: [] });
        try {
          const outcome = await playSession(manager, format, steps);
          total = { steps: total.steps + outcome.steps, compactions: total.compactions + outcome.compactions };
          expect(outcome.problems).toEqual([]);
        } finally {
          await manager.dispose();
        }
      }),
      { numRuns: RUNS, seed: 10 },
    );
  });
});

describe("chained auto-compactions on a pi session file (summary + unchanged suffix, shrunk at send time)", () => {
  it.each(PRESETS)("%s", async (preset) => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...WINDOWS), fc.array(stepArb, { minLength: 25, maxLength: 40 }), async (contextWindow, steps) => {
        const cwd = tmpProject({
          ".compactionrc.json": JSON.stringify({ preset, contextWindow, reserveTokens: Math.floor(contextWindow / 8), tokenizer: { counter: "estimate" } }),
        });
        const session = join(dir, `${preset}-${++n}.jsonl`);
        await createSession(session, { cwd: dir });
        const manager = await createContextManager<unknown>({ cwd, session });
        try {
          const outcome = await playSession(manager, "pi", steps);
          total = { steps: total.steps + outcome.steps, compactions: total.compactions + outcome.compactions };
          expect(outcome.problems).toEqual([]);
        } finally {
          await manager.dispose();
        }
      }),
      { numRuns: 1, seed: 10 },
    );
  });
});
