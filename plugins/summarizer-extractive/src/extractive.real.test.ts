/**
 * The extractive summarizer on a real pi-coding-agent session
 * (../shared/fixtures/real/pi-large-session.jsonl, see PROVENANCE.md there).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  createEstimateCounter,
  createPiAdapter,
  FactsCache,
  HISTORY_LAYOUT,
  parseSections,
  type PiMessage,
  readSummary,
} from "@compaction/core";
import { createExtractiveSummarizer } from "./extractive.js";

const FIXTURE = fileURLToPath(new URL("../../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));

/** The `message` entries of a pi session file, in order. */
function loadMessages(path: string): PiMessage[] {
  const messages: PiMessage[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const entry = JSON.parse(line) as { type?: string; message?: PiMessage };
    if (entry.type === "message" && entry.message !== undefined) messages.push(entry.message);
  }
  return messages;
}

const all = loadMessages(FIXTURE);
const first400 = all.slice(0, 400);
const cache = new FactsCache(createPiAdapter());
const counter = createEstimateCounter();
const summarizer = createExtractiveSummarizer();

const summarize = (messages: readonly PiMessage[], maxTokens: number) =>
  summarizer.summarize({ messages: messages.map((m) => cache.of(m)), maxTokens, counter, kind: "history" });

describe("extractive summarizer on pi-large-session.jsonl, first 400 messages", () => {
  it("puts the session's first request, word for word, first under Goal", async () => {
    // Message 0 is the bare command "/mode"; message 2 is the first real request.
    const request = first400[2];
    expect(request?.role).toBe("user");
    const text = request?.role === "user" && Array.isArray(request.content) && request.content[0]?.type === "text" ? request.content[0].text : "";
    expect(text.startsWith("read packages/coding-agent/docs/theme.md in full, then theme.ts")).toBe(true);
    const state = readSummary(await summarize(first400, 3000));
    expect(state.slots.goal[0]).toBe(text);
  });

  it("lists the files only read under Read and the edited ones (read first or not) under Modified", async () => {
    const state = readSummary(await summarize(first400, 3000));
    expect([...state.slots.filesRead].sort()).toEqual([
      "packages/coding-agent/src/tui/custom-editor.ts",
      "packages/coding-agent/src/tui/model-selector.ts",
      "packages/coding-agent/src/tui/oauth-selector.ts",
      "packages/coding-agent/src/tui/theme-selector.ts",
      "packages/coding-agent/src/tui/tool-execution.ts",
      "packages/coding-agent/src/tui/user-message.ts",
    ]);
    expect(state.slots.filesModified).toEqual(
      expect.arrayContaining([
        "packages/coding-agent/src/tui/user-message-selector.ts",
        "packages/coding-agent/src/tui/tui-renderer.ts",
        "packages/coding-agent/docs/theme.md",
        "packages/tui/test/test-themes.ts",
        "packages/tui/src/components/truncated-text.ts",
      ]),
    );
    expect(state.slots.filesModified).toHaveLength(15);
  });

  it("reports every failed tool call of the range but searches that found nothing (grep exiting with 1)", async () => {
    const isEmptySearch = (m: PiMessage) => m.role === "toolResult" && /^Command exited with code 1\.?$/.test(cache.of(m).text.trim());
    const errors = first400.filter((m) => m.role === "toolResult" && m.isError && !isEmptySearch(m)).length;
    expect(errors).toBeGreaterThan(0);
    expect(first400.some(isEmptySearch)).toBe(true);
    const state = readSummary(await summarize(first400, 3000));
    expect(state.slots.failed).toHaveLength(errors);
    expect(state.slots.failed).toContain("bash(grep -A 3 \"function applyBackgroundToLine\" packages/tui/src/wrap-ansi.ts): grep: packages/tui/src/wrap-ansi.ts: No such file or directory");
  });

  it("stays within the cap at 3000 and at 600 tokens, its sections in the layout's order, none of them empty", async () => {
    const order = HISTORY_LAYOUT.map((entry) => `${"#".repeat(entry.level)} ${entry.title}`);
    for (const cap of [3000, 600]) {
      const summary = await summarize(first400, cap);
      expect(counter.count(summary)).toBeLessThanOrEqual(cap);
      const { sections } = parseSections(summary);
      const headings = sections.map((s) => s.heading);
      expect(headings).toEqual([...headings].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
      expect(headings).toEqual(expect.arrayContaining(["## Goal", "## Current Task", "### Done", "### Modified"]));
      sections.forEach((section, i) => expect(section.lines.length > 0 || sections[i + 1]?.level === 3).toBe(true));
    }
  });
});

describe("extractive summarizer on the whole of pi-large-session.jsonl", () => {
  it("stays within the cap and, merging its own first half, keeps the first request", async () => {
    const firstHalf = await summarize(all.slice(0, 457), 3000);
    const merged = await summarizer.summarize({
      messages: all.slice(457).map((m) => cache.of(m)),
      previousSummary: firstHalf,
      maxTokens: 3000,
      counter,
      kind: "history",
    });
    expect(counter.count(merged)).toBeLessThanOrEqual(3000);
    expect(readSummary(merged).slots.goal[0]).toBe(readSummary(firstHalf).slots.goal[0]);
    const whole = await summarize(all, 3000);
    expect(counter.count(whole)).toBeLessThanOrEqual(3000);
  });
});
