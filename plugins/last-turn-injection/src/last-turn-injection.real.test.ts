/**
 * Real transcripts: the section quotes the last user message before the cut, as the transcript
 * recorded it (read from the raw JSON here, not through the plugin's own extraction).
 */
import { Compactor, type CompactionPlugin, createAnthropicAdapter, createPiAdapter, createTiktokenCounter } from "@compaction/core";
import { recordDrafts } from "@compaction/core/testing";
import { loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { afterAll, describe, expect, it } from "vitest";
import { LAST_TURN_HEADING, TRUNCATION_MARKER, lastTurnInjection } from "./index.js";
import { baseSummary, cutAt, sectionOf, summarizerSummary } from "./test-support/plugins.js";

const counter = createTiktokenCounter();
afterAll(() => counter.dispose());

const pi = loadPiMessages("pi-large-session.jsonl");

/** Text blocks of a raw message's content, joined as the adapters join them. */
function rawText(message: unknown): string {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block?.type === "text" && typeof block.text === "string" && block.text !== "")
    .map((block) => block.text as string)
    .join("\n");
}

/** The first line of the user's text as the section quotes it: `> **User:** <line>`. */
function quotedFirstLine(text: string): string {
  const firstLine = text.replace(/^(?:[ \t]*\r?\n)+/, "").split(/\r?\n/)[0] ?? "";
  return `> **User:** ${firstLine.trimEnd().slice(0, 60)}`;
}

function compactor<T>(adapter: never, plugins: CompactionPlugin[]): Compactor<T> {
  return new Compactor<T>({ summarizer: createExtractiveSummarizer(), adapter, tokenCounter: counter, ownsTokenCounter: false, plugins, contextWindow: 10_000_000 });
}

describe("lastTurnInjection on pi-large-session.jsonl", () => {
  const userIndices = pi.flatMap((m, i) => (m.role === "user" ? [i] : []));

  it("holds the last user message before the cut, after the extractive summary", async () => {
    const cut = 395; // "ok, make the diff red and green ..."; the user message before it is 389
    expect(pi[cut]?.role).toBe("user");
    expect(rawText(pi[389])).toBe("ok, make muted a little brighter");
    expect(pi.slice(390, cut).every((m) => m.role !== "user")).toBe(true);
    const c = compactor(createPiAdapter() as never, [cutAt(cut), summarizerSummary(), lastTurnInjection()]);
    const result = await c.compact({ messages: pi });
    expect(result.status).toBe("compacted");
    const summary = result.summary ?? "";
    expect(summary.startsWith("## Goal")).toBe(true);
    const section = sectionOf(summary, LAST_TURN_HEADING);
    expect(summary.endsWith(`\n\n${section}`)).toBe(true);
    expect(section).toContain("> **User:** ok, make muted a little brighter\n>\n> **Assistant:** ");
    const replies = pi.slice(390, cut).filter((m) => m.role === "assistant").map((m) => rawText(m)).filter((t) => t !== "");
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) expect(section).toContain((reply.split("\n")[0] ?? "").slice(0, 40));
    expect(counter.count(section)).toBeLessThanOrEqual(2000);
  });

  it("shows only the user message when the reply was an aborted tool call", async () => {
    const cut = 413; // 409 "dude sleep 5 seconds via bash", then a bash call, "Command aborted", an empty aborted reply
    expect(pi.slice(410, cut).map((m) => m.role)).toEqual(["assistant", "toolResult", "assistant"]);
    const c = compactor(createPiAdapter() as never, [cutAt(cut), baseSummary("## Goal\n- themes"), lastTurnInjection()]);
    const section = sectionOf((await c.compact({ messages: pi })).summary, LAST_TURN_HEADING);
    expect(section).toBe("## Last Exchange (Verbatim)\n\n> **User:** dude sleep 5 seconds via bash");
  });

  it("replaces the previous summary's section when the extractive summary is updated", async () => {
    const first = await compactor(createPiAdapter() as never, [cutAt(413), summarizerSummary(), lastTurnInjection()]).compact({
      messages: pi,
    });
    expect(first.summary).toContain(LAST_TURN_HEADING);
    const resumed = first.messages;
    const nextCut = resumed.findIndex((m) => {
      const raw = m as { role?: string; content?: unknown };
      return raw.role === "user" && rawText(raw).startsWith("are you fucking stupid?");
    });
    expect(nextCut).toBeGreaterThan(0);
    const second = await compactor(createPiAdapter() as never, [cutAt(nextCut), summarizerSummary(), lastTurnInjection()]).compact({
      messages: resumed,
    });
    const summary = second.summary ?? "";
    expect(summary.split(LAST_TURN_HEADING)).toHaveLength(2);
    const section = sectionOf(summary, LAST_TURN_HEADING);
    expect(section).toContain("> **User:** green diff is #b5bd68");
    expect(section).not.toContain("dude sleep 5 seconds via bash");
  });

  it("quotes the user message before every user-message cut in the session", async () => {
    let cut = 0;
    const record = recordDrafts();
    const c = compactor(createPiAdapter() as never, [cutAt(() => cut), baseSummary("## Goal\n- themes"), lastTurnInjection(), record]);
    let checked = 0;
    let refused = 0;
    for (let k = 1; k < userIndices.length; k++) {
      cut = userIndices[k] as number;
      const previous = userIndices[k - 1] as number;
      const result = await c.compact({ messages: pi });
      // The section is checked as written: where the summary would be no smaller than the few
      // messages before an early cut, the core refuses the compaction (and says so) instead.
      const summary = record.drafts.at(-1)?.text ?? "";
      if (result.status === "noop") {
        expect(result.reason, `cut at ${cut}`).toMatch(/^The summary \(\d+ tokens\) would not be smaller than the [\d,]+ tokens/);
        expect(c.tokens.count(c.adapter.createSummary(summary)), `cut at ${cut}`).toBeGreaterThanOrEqual(c.tokens.total(pi.slice(0, cut)));
        refused++;
      } else {
        expect(result.summary, `cut at ${cut}`).toBe(summary);
      }
      const section = sectionOf(summary, LAST_TURN_HEADING);
      expect(section, `cut at ${cut}`).toContain(quotedFirstLine(rawText(pi[previous])));
      expect(counter.count(section)).toBeLessThanOrEqual(2000);
      checked++;
    }
    expect(checked).toBe(userIndices.length - 1);
    expect(refused).toBeLessThan(checked / 4);
  }, 60_000);

  it("cuts a long reply with [...truncated] at a small cap and keeps the user text whole", async () => {
    const cut = 339; // the user message before it pastes a screenshot path
    const previous = 327;
    const c = compactor(createPiAdapter() as never, [cutAt(cut), baseSummary("## Goal\n- themes"), lastTurnInjection({ lastTurnMaxTokens: 150 })]);
    const section = sectionOf((await c.compact({ messages: pi })).summary, LAST_TURN_HEADING);
    expect(counter.count(section)).toBeLessThanOrEqual(150);
    expect(section).toContain(quotedFirstLine(rawText(pi[previous])));
    expect(section.endsWith(TRUNCATION_MARKER)).toBe(true);
  });
});

describe("lastTurnInjection on a Claude Code transcript (Anthropic adapter)", () => {
  const messages = loadClaudeMessages("claude-code-log-37f83ec9.jsonl");
  const adapter = createAnthropicAdapter();
  /** A user message with text and no tool_result block: a real user turn in the raw JSON. */
  const isUserTurn = (m: (typeof messages)[number]) =>
    m.role === "user" &&
    m.isCompactSummary !== true &&
    rawText(m).trim() !== "" &&
    !(Array.isArray(m.content) && m.content.some((block) => block.type === "tool_result"));

  it("holds the last user message before a cut in the second half of the session", async () => {
    const userTurns = messages.flatMap((m, i) => (isUserTurn(m) ? [i] : []));
    expect(userTurns.length).toBeGreaterThan(3);
    const cut = userTurns[Math.floor(userTurns.length / 2) + 1] as number;
    const previous = userTurns[Math.floor(userTurns.length / 2)] as number;
    const c = compactor(adapter as never, [cutAt(cut), baseSummary("## Goal\n- logs"), lastTurnInjection()]);
    const result = await c.compact({ messages });
    expect(result.status).toBe("compacted");
    const section = sectionOf(result.summary, LAST_TURN_HEADING);
    expect(section).toContain(quotedFirstLine(rawText(messages[previous])));
    expect(section).not.toContain("tool_use_id");
    expect(counter.count(section)).toBeLessThanOrEqual(2000);
  });
});
