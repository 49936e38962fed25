import {
  Compactor,
  type CompactionPlugin,
  ErrorCodes,
  STAGE_AUGMENT,
  type TokenCounter,
  createEstimateCounter,
} from "@compaction/core";
import { FORMATS, builders, recordDrafts } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import lastTurnInjectionDefault, { LAST_TURN_HEADING, PLUGIN_NAME, TRUNCATION_MARKER, lastTurnInjection } from "./index.js";
import { baseSummary, cutAt, sectionOf } from "./test-support/plugins.js";

const BASE = "## Goal\n- ship the fix";

function compactor(adapter: unknown, plugins: CompactionPlugin[], tokenCounter: TokenCounter = createEstimateCounter()) {
  return new Compactor<any>({ summarizer: createExtractiveSummarizer(), adapter: adapter as never, tokenCounter, plugins, contextWindow: 1_000_000, reserveTokens: 0 });
}

describe.each(FORMATS)("lastTurnInjection with a Compactor on %s messages", (format) => {
  const b = builders(format);
  const third = () => b.user("third request");
  function conversation() {
    const cut = third();
    const messages = [
      b.user("first request"),
      b.assistant("first answer"),
      b.user("second request\nwith two lines"),
      b.assistant("let me look", [{ id: "c1" }, { id: "c2", name: "read", args: { path: "src/a.ts" } }]),
      ...b.toolResults([
        { id: "c1", text: "tool output one" },
        { id: "c2", text: "file body" },
      ]),
      b.assistant("found it"),
      cut,
      b.assistant("third answer"),
    ];
    return { messages, cutIndex: messages.indexOf(cut) };
  }
  const expectedSection =
    "## Last Exchange (Verbatim)\n\n> **User:** second request\n> with two lines\n>\n> **Assistant:** let me look\n>\n> found it";

  it("appends the section after the base summary, separated by a blank line", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBe(`${BASE}\n\n${expectedSection}`);
  });

  it("appends after the base summary even when applied before the summary plugin", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [lastTurnInjection(), cutAt(cutIndex), baseSummary(BASE)]).compact({ messages });
    expect(result.summary).toBe(`${BASE}\n\n${expectedSection}`);
  });

  it("puts the section into the summary message of the host's format", async () => {
    const { messages, cutIndex } = conversation();
    const c = compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection()]);
    const result = await c.compact({ messages });
    const summaries = result.messages.filter((m) => c.adapter.readFacts(m).kind === "summary");
    expect(summaries).toHaveLength(1);
    expect(c.adapter.readFacts(summaries[0]).text).toContain(expectedSection);
  });

  it("takes the last exchange of the compacted messages, not of the kept ones", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.summary).not.toContain("third request");
    expect(result.summary).not.toContain("first request");
  });

  it("leaves out tool calls and tool output of a tool-call-heavy assistant message", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.summary).not.toContain("tool output one");
    expect(result.summary).not.toContain("src/a.ts");
  });

  it("shows the early part of a split turn: its user message and the replies before the cut", async () => {
    const { messages } = conversation();
    const foundIt = messages.findIndex((m) => b.adapter.readFacts(m).text === "found it");
    const result = await compactor(b.adapter, [cutAt(foundIt), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(sectionOf(result.summary, LAST_TURN_HEADING)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** second request\n> with two lines\n>\n> **Assistant:** let me look",
    );
  });

  it("adds nothing when the compacted messages hold no user message (the turn is kept)", async () => {
    const messages = [b.assistant("a reply from an earlier session"), b.user("the current ask"), b.assistant("working")];
    const result = await compactor(b.adapter, [cutAt(1), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBe(BASE);
  });

  it("adds nothing when the compacted messages are only tool calls and tool results", async () => {
    // A tool output longer than the summary, so the compaction shrinks the context and is written.
    const messages = [
      b.assistant("", [{ id: "c1" }]),
      ...b.toolResults([{ id: "c1", text: "out ".repeat(100) }]),
      b.user("the current ask"),
      b.assistant("working"),
    ];
    const cut = messages.findIndex((m) => b.adapter.readFacts(m).text === "the current ask");
    const result = await compactor(b.adapter, [cutAt(cut), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBe(BASE);
  });

  it("leaves a context of one short turn as it is: the summary quoting that turn would be longer than the turn", async () => {
    const messages = [b.user("fix the parser"), b.assistant("fixed an off-by-one in parse.ts"), b.user("next"), b.assistant("ok")];
    const record = recordDrafts();
    const result = await compactor(b.adapter, [cutAt(2), baseSummary(BASE), lastTurnInjection(), record]).compact({ messages });
    expect(sectionOf(record.drafts[0]?.text ?? "", LAST_TURN_HEADING)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** fix the parser\n>\n> **Assistant:** fixed an off-by-one in parse.ts",
    );
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
    expect(result.reason).toMatch(/^The summary \(\d+ tokens\) would not be smaller than the \d+ tokens of the 2 messages it replaces/);
  });

  it("pairs replies with a pinned user message kept ahead of the summary, not with an earlier one", async () => {
    const messages = [
      b.user(`old request: ${"check the parser. ".repeat(20)}`),
      b.assistant(`old answer: ${"fixed parse.ts. ".repeat(20)}`),
      b.pin(b.user("pinned request")),
      b.assistant("reply to the pinned request"),
      b.user("next"),
      b.assistant("ok"),
    ];
    const result = await compactor(b.adapter, [cutAt(4), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(result.cut?.preservedIndices).toEqual([2]);
    expect(sectionOf(result.summary, LAST_TURN_HEADING)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** pinned request\n>\n> **Assistant:** reply to the pinned request",
    );
  });

  it("shows an image in the last user message as [image]", async () => {
    const messages = [b.image("this looks broken"), b.assistant("the margin is off"), b.user("next"), b.assistant("ok")];
    const result = await compactor(b.adapter, [cutAt(2), baseSummary(BASE), lastTurnInjection()]).compact({ messages });
    expect(sectionOf(result.summary, LAST_TURN_HEADING)).toBe(
      "## Last Exchange (Verbatim)\n\n> **User:** this looks broken\n> [image]\n>\n> **Assistant:** the margin is off",
    );
  });

  it("adds nothing when lastTurnInjection is false", async () => {
    const { messages, cutIndex } = conversation();
    const c = compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection({ lastTurnInjection: false })]);
    const result = await c.compact({ messages });
    expect(result.summary).toBe(BASE);
    expect(c.hooks.summarize.taps.some((tap) => tap.name === PLUGIN_NAME)).toBe(false);
  });

  it("caps the section at lastTurnMaxTokens with the compactor's token counter", async () => {
    const long = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");
    const messages = [b.user("summarise the log"), b.assistant(long), b.user("next"), b.assistant("ok")];
    const counter = createEstimateCounter();
    const c = compactor(b.adapter, [cutAt(2), baseSummary(BASE), lastTurnInjection({ lastTurnMaxTokens: 300 })], counter);
    const section = sectionOf((await c.compact({ messages })).summary, LAST_TURN_HEADING);
    expect(counter.count(section)).toBeLessThanOrEqual(300);
    expect(counter.count(section)).toBeGreaterThan(250);
    expect(section).toContain("> **User:** summarise the log");
    expect(section.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it("fits the section into what the kept messages and the summary leave of the budget", async () => {
    // Kept messages large enough that half the run's summary allowance (an eighth of the budget)
    // is more than the room: the room is what limits the section.
    const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");
    const messages = [b.user("second request"), b.assistant(words(300, "reply")), b.user("third request"), b.assistant(words(1000, "kept"))];
    const cutIndex = 2;
    const c = compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection()]);
    const kept = c.tokens.total(messages.slice(cutIndex));
    const counter = c.tokens.counter;
    const room = 80; // tokens left for the section after the kept messages and the summary
    const contextWindow = kept + counter.count(`${BASE}\n\n`) + room;
    const result = await c.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    const section = sectionOf(result.summary, LAST_TURN_HEADING);
    expect(section).toContain(TRUNCATION_MARKER);
    expect(counter.count(section)).toBeLessThanOrEqual(room);
    expect(counter.count(section)).toBeGreaterThan(room / 2);
    expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
  });

  it("caps at 2,000 tokens by default", async () => {
    const long = Array.from({ length: 6000 }, (_, i) => `word${i}`).join(" ");
    const messages = [b.user("go"), b.assistant(long), b.user("next"), b.assistant("ok")];
    const counter = createEstimateCounter();
    const c = compactor(b.adapter, [cutAt(2), baseSummary(BASE), lastTurnInjection()], counter);
    const section = sectionOf((await c.compact({ messages })).summary, LAST_TURN_HEADING);
    expect(counter.count(section)).toBeLessThanOrEqual(2000);
    expect(counter.count(section)).toBeGreaterThan(1900);
  });

  it("takes at most half the run's summary allowance: a small window's summary keeps room for the work done", async () => {
    const long = Array.from({ length: 6000 }, (_, i) => `word${i}`).join(" ");
    const messages = [b.user("go"), b.assistant(long), b.user("next"), b.assistant("ok")];
    const counter = createEstimateCounter();
    const c = new Compactor<any>({
      summarizer: createExtractiveSummarizer(),
      adapter: b.adapter as never,
      tokenCounter: counter,
      plugins: [cutAt(2), baseSummary(BASE), lastTurnInjection()],
      contextWindow: 1_000_000,
      summaryMaxTokens: 600,
    });
    const result = await c.compact({ messages });
    const section = sectionOf(result.summary, LAST_TURN_HEADING);
    expect(counter.count(section)).toBeLessThanOrEqual(300);
    expect(counter.count(section)).toBeGreaterThan(250);
    expect(section.endsWith(TRUNCATION_MARKER)).toBe(true);
  });

  it("counts with the compactor's own token counter", async () => {
    const perChar: TokenCounter = { name: "chars", count: (text) => text.length, dispose: () => {} };
    const long = Array.from({ length: 500 }, (_, i) => `word${i}`).join(" ");
    const messages = [b.user("go"), b.assistant(long), b.user("next"), b.assistant("ok")];
    const c = compactor(b.adapter, [cutAt(2), baseSummary(BASE), lastTurnInjection({ lastTurnMaxTokens: 200 })], perChar);
    const section = sectionOf((await c.compact({ messages })).summary, LAST_TURN_HEADING);
    expect(section.length).toBeLessThanOrEqual(200);
    expect(section.length).toBeGreaterThan(150);
  });

  it("warns and adds nothing when the cap is too small for the heading and markers", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary(BASE), lastTurnInjection({ lastTurnMaxTokens: 5 })]).compact({
      messages,
    });
    expect(result.summary).toBe(BASE);
    expect(result.warnings.some((w) => w.startsWith(`[${PLUGIN_NAME}]`) && w.includes("lastTurnMaxTokens (5)"))).toBe(true);
  });

  it("replaces a last-exchange section carried over from an earlier summary", async () => {
    const { messages, cutIndex } = conversation();
    const stale = `${BASE}\n\n${LAST_TURN_HEADING}\n\n> **User:** a stale request`;
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary(stale), lastTurnInjection()]).compact({ messages });
    expect(result.summary).toBe(`${BASE}\n\n${expectedSection}`);
  });

  it("leaves an eviction note unchanged", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary("[7 messages evicted]", "note"), lastTurnInjection()]).compact({
      messages,
    });
    expect(result.summary).toBe("[7 messages evicted]");
  });

  it("leaves a silent drop (kind none) unchanged", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), baseSummary("", "none"), lastTurnInjection()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBeNull();
  });

  it("does not stand in for a missing summary: the run still fails", async () => {
    const { messages, cutIndex } = conversation();
    const result = await compactor(b.adapter, [cutAt(cutIndex), lastTurnInjection()]).compact({ messages });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(result.messages).toBe(messages);
  });

  it("quotes the last user message before any cut, within the cap (property)", async () => {
    type Step = { kind: "user"; text: string } | { kind: "assistant"; text: string; calls: number };
    const text = fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 1, maxLength: 60 }).map((w) => w.join(" "));
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("user" as const), text }),
      fc.record({ kind: fc.constant("assistant" as const), text: fc.oneof(text, fc.constant("")), calls: fc.integer({ min: 0, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 20 }), fc.nat(), fc.integer({ min: 30, max: 400 }), async (steps, pick, cap) => {
        // An earlier session's long reply first, so every cut compacts more than the summary holds
        // (the core refuses a compaction that would not make the context smaller); it comes before
        // every user message, so it is never part of the last exchange.
        const messages: unknown[] = [b.assistant("an earlier reply. ".repeat(120))];
        const starts: number[] = [];
        let id = 0;
        for (const s of steps) {
          starts.push(messages.length);
          if (s.kind === "user") {
            messages.push(b.user(s.text));
            continue;
          }
          const calls = Array.from({ length: s.calls }, () => ({ id: `call${id++}` }));
          messages.push(b.assistant(s.text === "" && calls.length === 0 ? "x" : s.text, calls));
          messages.push(...b.toolResults(calls.map((c) => ({ id: c.id, text: "result" }))));
        }
        // The core never compacts the newest user message: a cut past it lands on it (issue 10).
        const newestUserStep = steps.map((s) => s.kind).lastIndexOf("user");
        const cutStep = Math.min(1 + (pick % (steps.length - 1)), newestUserStep < 0 ? steps.length : newestUserStep);
        if (cutStep === 0) return;
        const counter = createEstimateCounter();
        const c = compactor(b.adapter, [cutAt(starts[cutStep] as number), baseSummary(BASE), lastTurnInjection({ lastTurnMaxTokens: cap })], counter);
        const result = await c.compact({ messages });
        expect(result.status).toBe("compacted");
        const section = sectionOf(result.summary, LAST_TURN_HEADING);
        const lastUser = steps.slice(0, cutStep).filter((s) => s.kind === "user").pop();
        if (lastUser === undefined) {
          expect(result.summary).toBe(BASE);
          return;
        }
        expect(result.summary?.startsWith(`${BASE}\n\n${LAST_TURN_HEADING}`)).toBe(true);
        expect(counter.count(section)).toBeLessThanOrEqual(cap);
        const shown = section.split("\n")[2]?.slice("> **User:** ".length) ?? "";
        const shownText = shown.endsWith(TRUNCATION_MARKER) ? shown.slice(0, -TRUNCATION_MARKER.length).trimEnd() : shown;
        expect(lastUser.text.startsWith(shownText)).toBe(true);
        if (!shown.endsWith(TRUNCATION_MARKER)) expect(shown).toBe(lastUser.text);
      }),
      { numRuns: 150 },
    );
  });
});

describe("lastTurnInjection plugin", () => {
  it("is the package's default export", () => {
    expect(lastTurnInjectionDefault).toBe(lastTurnInjection);
  });

  it("is named last-turn-injection and taps summarize at STAGE_AUGMENT with its name", () => {
    const plugin = lastTurnInjection();
    const c = compactor(builders("pi").adapter, [plugin]);
    expect(plugin.name).toBe(PLUGIN_NAME);
    expect(PLUGIN_NAME).toBe("last-turn-injection");
    expect(c.hooks.summarize.taps.map((tap) => [tap.name, tap.stage])).toEqual([[PLUGIN_NAME, STAGE_AUGMENT]]);
  });
});
