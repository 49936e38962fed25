/**
 * Issue 10: layered's tool-output pruning at send time, for every host that records only
 * "summary + unchanged suffix". Here the context manager on a copy of a real pi session file: the
 * file keeps every output in full, what `send()` hands the model has the old outputs pruned,
 * and the same context gives the same request.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import type { PiMessage } from "@compaction/core";
import { isPrunedMarker } from "@compaction/plugin-layered";
import { upgradeSession } from "@compaction/transcript";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PI_LARGE = fileURLToPath(new URL("../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "send-time-pruning-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

/**
 * A context manager on a copy of the real session, its window set so the context is at `share` of
 * it: by our count, or as the provider counts it (its usage figures: about 1.4x chars/4 here).
 */
async function managerAt(preset: string, share: number, measure: "count" | "provider" = "count"): Promise<{ manager: ContextManager<PiMessage>; path: string }> {
  const path = join(dir, `${preset}-${managers.length}.jsonl`);
  copyFileSync(PI_LARGE, path);
  await upgradeSession(path);
  const probe = await createContextManager<PiMessage>({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify({ tokenizer: { counter: "estimate" } }) }), session: path });
  const size = measure === "count" ? probe.compactor.tokens.total(probe.messages) : probe.tokens;
  const contextWindow = Math.ceil(size / share);
  await probe.dispose();
  const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ preset, contextWindow, tokenizer: { counter: "estimate" } }) });
  // Auto-compaction off: the provider's usage figures put this session higher than our count
  // does, and a compaction before the send is not what this test is about.
  const manager = await createContextManager<PiMessage>({ cwd, session: path, autoCompact: false });
  managers.push(manager);
  return { manager, path };
}

function prunedIndices(manager: ContextManager<PiMessage>, sent: readonly PiMessage[]): number[] {
  return sent.flatMap((m, i) => {
    const facts = manager.compactor.facts.of(m);
    return facts.kind === "toolResult" && isPrunedMarker(facts.text) ? [i] : [];
  });
}

describe("layered's pruning in what the context manager sends from a pi session file", () => {
  it("sends old tool outputs as markers, keeps them whole in the file, and sends the same request twice", async () => {
    // At 85% of the window by our count: above layered's pruneThreshold (80%).
    const { manager, path } = await managerAt("layered", 0.85);
    const fileBefore = readFileSync(path, "utf8");
    const sent: Array<readonly PiMessage[]> = [];
    await manager.send(async (messages) => sent.push(messages));
    await manager.send(async (messages) => sent.push(messages));

    const [first, second] = sent as [readonly PiMessage[], readonly PiMessage[]];
    const pruned = prunedIndices(manager, first);
    expect(pruned.length).toBeGreaterThan(0);
    expect(manager.compactor.tokens.total(first)).toBeLessThan(manager.compactor.tokens.total(manager.messages));
    for (const i of pruned) {
      const full = manager.messages[i] as PiMessage;
      expect(manager.compactor.facts.of(full).kind).toBe("toolResult");
      expect(isPrunedMarker(manager.compactor.facts.of(full).text)).toBe(false); // the context keeps the output
    }
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
    expect(JSON.stringify(manager.requestMessages())).toBe(JSON.stringify(first));
    expect(readFileSync(path, "utf8")).toBe(fileBefore); // nothing written: no compaction, no pruning in the file
  });

  it("prunes nothing below pruneThreshold", async () => {
    // At 70% of the window as the provider counts it (at 70% of it by our count, the provider's
    // count fills the window: what is sent is shrunk to the budget then, see the next test).
    const { manager } = await managerAt("layered", 0.7, "provider");
    expect(manager.requestMessages()).toEqual(manager.messages);
    expect(manager.requestMessages()).not.toBe(manager.messages); // a copy: it does not grow with the context
  });

  it("shrinks what it sends to the budget when the provider's count fills the window, though ours is at 70% of it", async () => {
    const { manager } = await managerAt("layered", 0.7);
    expect(manager.tokens).toBeGreaterThan(manager.contextWindow * 0.95);
    expect(manager.budget).toBeLessThan(manager.compactor.tokens.total(manager.messages));
    const sent = manager.requestMessages();
    expect(sent).not.toBe(manager.messages);
    expect(manager.compactor.tokens.total(sent)).toBeLessThanOrEqual(manager.budget);
  });

  it("does not prune for a preset without layered (the context manager sends what the preset shapes)", async () => {
    const { manager } = await managerAt("safeguard", 0.7, "provider");
    expect(prunedIndices(manager, manager.requestMessages())).toEqual([]);
  });
});
