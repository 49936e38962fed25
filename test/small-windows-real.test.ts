/**
 * Issue 40 on the real transcripts: every recorded session replayed message by message through
 * the context manager at a small model's window (8k, 16k), with the default config (a preset and
 * the window, no reserveTokens), as a host runs it: appended, checked before each model call, the
 * request sent. Every compaction works, none runs at every message, and no request collapses to the
 * newest message while the context holds more that fits.
 *
 * Each transcript is replayed up to about six of its windows (the start of every session: enough to
 * compact several times at each window, in a test that stays short); `npm run bench`'s
 * windows benchmark replays them whole, at every window from 8k to 128k, through every preset.
 */
import { createContextManager } from "@compaction/context-manager";
import { type CompactionError, ErrorCodes, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, loadFixtureAsPi } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const WINDOWS = [8_000, 16_000] as const;
const PRESETS = ["safeguard", "rolling"] as const;
/** How much of each transcript is replayed, in windows. */
const WINDOWS_REPLAYED = 6;

interface Replay {
  readonly appended: number;
  readonly compactions: number;
  readonly failures: readonly string[];
  readonly collapsed: readonly string[];
  readonly overBudget: readonly string[];
}

async function replay(file: string, preset: string, window: number): Promise<Replay> {
  const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ preset, adapter: "pi", contextWindow: window }) });
  const manager = await createContextManager<PiMessage>({ cwd });
  const failures: string[] = [];
  const collapsed: string[] = [];
  const overBudget: string[] = [];
  let overflowReported = false;
  manager.on("compaction-end", (event) => {
    if (event.result.status === "failed") failures.push(`compaction failed: ${event.result.reason ?? ""}`);
  });
  manager.on("error", (event) => {
    if (event.during !== "request") failures.push(`error during ${event.during}: ${event.error.message}`);
    else if ((event.error as CompactionError).code === ErrorCodes.CONTEXT_OVERFLOW) overflowReported = true;
  });
  try {
    const messages = loadFixtureAsPi(file, { usage: false });
    const tokensOf = (message: PiMessage): number => manager.compactor.tokens.count(message);
    let appended = 0;
    for (const [index, message] of messages.entries()) {
      if (appended > WINDOWS_REPLAYED * window) break;
      // A model call: what the host sends before the recorded reply.
      if (manager.compactor.facts.of(message).kind === "assistant" && manager.messages.length > 0) {
        await manager.check();
        overflowReported = false;
        const request = manager.requestMessages();
        const sent = manager.compactor.tokens.total(request);
        const held = manager.compactor.tokens.total(manager.messages);
        // The request holds what fits: all of the context within the budget, else at least half the budget.
        if (sent < Math.min(held, manager.budget / 2)) collapsed.push(`message ${index}: ${request.length} messages, ${sent} tokens sent of ${held} held (budget ${manager.budget})`);
        if (sent > manager.budget && !overflowReported) overBudget.push(`message ${index}: ${sent} tokens over the budget of ${manager.budget}, not reported`);
      }
      await manager.append(message);
      appended += tokensOf(message);
    }
    return { appended, compactions: manager.compactions, failures, collapsed, overBudget };
  } finally {
    await manager.dispose();
  }
}

describe.each(WINDOWS)("a real session at a %i-token window, on the default config", (window) => {
  describe.each(PRESETS)("preset %s", (preset) => {
    it.each(ALL_FIXTURES)("%s: every compaction works, none at every message, and the request holds what fits", async (file) => {
      const result = await replay(file, preset, window);
      expect(result.failures).toEqual([]);
      expect(result.collapsed).toEqual([]);
      expect(result.overBudget).toEqual([]);
      // At most one compaction per quarter of the window appended.
      expect(result.compactions).toBeLessThanOrEqual(Math.floor(result.appended / (window / 4)) + 1);
      if (result.appended > window) expect(result.compactions).toBeGreaterThan(0);
    });
  });
});
