import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FactsCache } from "../messages/adapter.js";
import { builders, FORMATS, words } from "../testing/builders.js";
import { MessageTokenCounter } from "../tokens/message-tokens.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { headAndTail, SHRINK_MARKER_PATTERN, shrinkMarker } from "./head-and-tail.js";
import { shrinkToBudget } from "./shrink-to-budget.js";

function counterFor(format: (typeof FORMATS)[number]) {
  const b = builders(format);
  return { b, tokens: new MessageTokenCounter(new FactsCache(b.adapter), createEstimateCounter()) };
}

/** Distinct lines, so head and tail can be told apart from the middle. */
function lines(n: number, label = "line"): string {
  return Array.from({ length: n }, (_, i) => `${label} ${i} ${words(6, "beta")}`).join("\n");
}

describe("headAndTail", () => {
  const marker = (removed: number) => `[removed ${removed}]`;
  it("keeps the head and the tail with the marker between them", () => {
    const text = lines(1000);
    const out = headAndTail(text, 2000, marker);
    expect(out.startsWith("line 0 ")).toBe(true);
    expect(out.endsWith(`line 999 ${words(6, "beta")}`)).toBe(true);
    expect(out).toMatch(/\[removed \d+\]/);
    expect(out.length).toBeLessThan(2200);
  });

  it("leaves a text that is not longer than what would be kept", () => {
    expect(headAndTail("short", 100, marker)).toBe("short");
  });

  it("says exactly how many characters it removed", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 3000 }), fc.nat(3000), (text, keep) => {
        const out = headAndTail(text, keep, marker);
        if (out === text) return;
        const removed = Number(/\[removed (\d+)\]/.exec(out)?.[1]);
        const [head, tail] = out.split(`\n[removed ${removed}]\n`);
        expect((head ?? "").length + (tail ?? "").length + removed).toBe(text.length);
        expect(text.startsWith(head ?? "")).toBe(true);
        expect(text.endsWith(tail ?? "")).toBe(true);
      }),
    );
  });
});

describe("headAndTail with names", () => {
  const marker = (removed: number) => `[removed ${removed}]`;
  it("lists the names of the removed middle after the marker, within the same allowance", () => {
    const middle = ["def test_corrupted_nested_zip(self):", "    open(outer.zip)"];
    const text = [lines(200, "head"), ...middle, lines(200, "tail")].join("\n");
    const plain = headAndTail(text, 2000, marker);
    const named = headAndTail(text, 2000, marker, 0.5);
    expect(plain).not.toContain("test_corrupted_nested_zip");
    expect(named).toMatch(/\[removed \d+\]\n\[names in the removed part: [^\]]*test_corrupted_nested_zip, outer\.zip\]/);
    expect(Math.abs(named.length - plain.length)).toBeLessThan(200);
  });

  it("says exactly how many characters it removed, names or not", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("src/a.ts ", "fooBar ", "plain ", "x_y_z\n", "--flag "), { maxLength: 600 }), fc.nat(3000), (pieces, keep) => {
        const text = pieces.join("");
        const out = headAndTail(text, keep, marker, 0.5);
        if (out === text) return;
        const removed = Number(/\[removed (\d+)\]/.exec(out)?.[1]);
        const [head, rest] = out.split(`\n[removed ${removed}]\n`);
        const tail = (rest ?? "").startsWith("[names in the removed part: ") ? (rest ?? "").slice((rest ?? "").indexOf("]\n") + 2) : (rest ?? "");
        expect((head ?? "").length + tail.length + removed).toBe(text.length);
      }),
    );
  });
});

describe("shrinkMarker", () => {
  it("names what was removed, the tool call and the recall tool", () => {
    const marker = shrinkMarker({ removedChars: 1204311, removedTokens: 281004, what: "tool output", toolCallIds: ["call_7"], recallTool: "memory_search" });
    expect(marker).toBe(
      "[compaction: 1,204,311 characters (~281,004 tokens) removed from the middle of this tool output; the full text is in the transcript (tool call call_7). Search it with memory_search.]",
    );
    expect(marker).toMatch(SHRINK_MARKER_PATTERN);
  });

  it("says nothing of recall when none is configured", () => {
    const marker = shrinkMarker({ removedChars: 10, removedTokens: 3, what: "request", toolCallIds: [], messageId: "m1" });
    expect(marker).toBe("[compaction: 10 characters (~3 tokens) removed from the middle of this request; the full text is in the transcript (entry m1).]");
  });
});

describe.each(FORMATS)("shrinkToBudget (%s)", (format) => {
  const { b, tokens } = counterFor(format);
  const conversation = (huge: number, request = "please read the log") => [
    b.user("first"),
    b.assistant("ok"),
    b.user(request),
    b.assistant("reading", [{ id: "c1" }, { id: "c2" }]),
    ...b.toolResults([
      { id: "c1", text: lines(huge, "log") },
      { id: "c2", text: lines(200, "small") },
    ]),
    b.assistant(lines(300, "thoughts")),
  ];

  it("returns the same array when the messages already fit", () => {
    const messages = conversation(10);
    const result = shrinkToBudget(messages, tokens, { budget: 1_000_000 });
    expect(result.messages).toBe(messages);
    expect(result.shrunk).toEqual([]);
    expect(result.fits).toBe(true);
  });

  it("shrinks the largest tool output first, to head and tail with a marker naming its call", () => {
    const messages = conversation(20000);
    const budget = 12000;
    const result = shrinkToBudget(messages, tokens, { budget, recallTool: "memory_search" });
    expect(result.fits).toBe(true);
    expect(tokens.total(result.messages)).toBe(result.tokens);
    expect(result.tokens).toBeLessThanOrEqual(budget);
    expect(result.shrunk[0]?.what).toBe("tool output");
    expect(result.shrunk[0]?.toolCallIds).toContain("c1");
    const text = b.adapter.readFacts(result.messages[result.shrunk[0]!.index]).text;
    expect(text).toMatch(SHRINK_MARKER_PATTERN);
    expect(text).toContain("tool call c1");
    expect(text).toContain("memory_search");
    expect(text).toContain("log 0 ");
    expect(text).toContain("log 19999 ");
    // The request is untouched while tool outputs can make room.
    expect(result.messages[2]).toBe(messages[2]);
  });

  it("keeps every tool call and every answer", () => {
    const messages = conversation(20000);
    const result = shrinkToBudget(messages, tokens, { budget: 3000 });
    const ids = (m: unknown) => b.adapter.readFacts(m);
    expect(result.messages.map((m) => ids(m).toolCalls.map((c) => c.id))).toEqual(messages.map((m) => ids(m).toolCalls.map((c) => c.id)));
    expect(result.messages.map((m) => ids(m).toolResultIds)).toEqual(messages.map((m) => ids(m).toolResultIds));
  });

  it("shrinks the newest user message last, and only to head and tail", () => {
    const request = lines(4000, "request");
    const messages = conversation(20000, request);
    const result = shrinkToBudget(messages, tokens, { budget: 1500 });
    expect(result.fits).toBe(true);
    const shrunkRequest = b.adapter.readFacts(result.messages[2]).text;
    expect(shrunkRequest).toMatch(SHRINK_MARKER_PATTERN);
    expect(shrunkRequest).toContain("this request");
    expect(shrunkRequest.startsWith("request 0 ")).toBe(true);
    expect(shrunkRequest).toContain("request 3999 ");
    // Everything else was already down to its smallest head and tail.
    for (const s of result.shrunk.filter((s) => s.what !== "request")) expect(s.tokensAfter).toBeLessThan(200);
  });

  it("never shrinks a pinned message and says when the rest cannot make room", () => {
    const pinned = b.pin(b.user(lines(3000, "policy")));
    const messages = [pinned, ...conversation(100)];
    const result = shrinkToBudget(messages, tokens, { budget: 1000 });
    expect(result.messages[0]).toBe(pinned);
    expect(result.fits).toBe(false);
  });

  it("gives the same result for the same input", () => {
    const a = shrinkToBudget(conversation(5000), tokens, { budget: 2000 });
    const c = shrinkToBudget(conversation(5000), tokens, { budget: 2000 });
    expect(JSON.stringify(a.messages.map((m) => b.adapter.readFacts(m).text))).toBe(JSON.stringify(c.messages.map((m) => b.adapter.readFacts(m).text)));
  });
});

describe.each(FORMATS)("shrinkToBudget in tiny windows (%s)", (format) => {
  const { b, tokens } = counterFor(format);
  const facts = (m: unknown) => b.adapter.readFacts(m);
  /** `message` with thinking, in the format's own place. */
  const thinking = (message: any, text: string): any =>
    format === "openai" ? { ...message, reasoning_content: text } : { ...message, content: [{ type: "thinking", thinking: text, signature: "s" }, ...message.content] };
  const conversation = (output = 300) => [
    b.pin(b.user("always answer in English")),
    b.assistant("noted"),
    b.user(`old question ${lines(50, "old")}`),
    thinking(b.assistant("looking", [{ id: "o1", name: "write", args: { path: "a.txt", content: lines(400, "old-arg") } }]), lines(300, "old-thought")),
    ...b.toolResults([{ id: "o1", text: "written" }]),
    b.assistant("done"),
    b.user("now fix the test"),
    thinking(b.assistant("first", [{ id: "n1", name: "write", args: { path: "b.txt", content: lines(400, "new-arg") } }]), lines(300, "step-thought")),
    ...b.toolResults([{ id: "n1", text: lines(output, "out") }]),
    thinking(b.assistant("second", [{ id: "n2" }]), lines(100, "answered-thought")),
    ...b.toolResults([{ id: "n2", text: lines(output, "out2") }]),
  ];

  it("drops thinking but that of the calls being answered, and cuts arguments inside valid JSON, before leaving anything out", () => {
    const messages = conversation(1); // outputs too short to shrink: thinking and arguments are what is large
    const answered = facts(messages.at(-2)).thinking;
    const budget = tokens.total(messages) - tokens.count(messages[3]) - 200; // more than dropping the old thinking saves
    const result = shrinkToBudget(messages, tokens, { budget, dropOlder: true });
    expect(result.fits).toBe(true);
    expect(result.dropped).toEqual([]);
    expect(facts(result.messages[3]).thinking).toBe("");
    expect(facts(result.messages.at(-2)).thinking).toBe(answered);
    for (const m of result.messages) for (const call of facts(m).toolCalls) expect(typeof call.arguments === "object").toBe(true);
  });

  it("leaves out older turns whole, then earlier steps of the newest turn, never the pinned message or a call without its result", () => {
    const messages = conversation();
    const request = messages.findIndex((m) => facts(m).text === "now fix the test");
    // Room for the pinned message, the request, the thinking of the calls being answered (sent as
    // it is) and the newest step's markers.
    const answered = createEstimateCounter().count(facts(messages.at(-2)).thinking);
    const budget = tokens.count(messages[0]) + tokens.count(messages[request]) + answered + 120;
    const result = shrinkToBudget(messages, tokens, { budget, dropOlder: true });
    expect(result.fits, `${result.tokens} tokens for ${budget}`).toBe(true);
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.dropped.length).toBeGreaterThan(0);
    expect(result.dropped.every((i) => i !== 0 && i !== request)).toBe(true);
    const issued = new Set<string>();
    for (const m of result.messages) {
      for (const id of facts(m).toolResultIds) expect(issued.has(id)).toBe(true);
      for (const call of facts(m).toolCalls) issued.add(call.id);
    }
    expect(result.messages.some((m) => facts(m).text === "now fix the test")).toBe(true);
    expect(result.messages.map((m) => facts(m).toolCalls.map((c) => c.id)).flat()).toContain("n2");
  });

  it("cuts the arguments of a message that is mostly kept thinking to what fits, rather than leaving the step out", () => {
    // The thinking of the calls being answered is sent as it is, so the arguments are a small part of
    // the message: cutting each to the share `target / current` of the message keeps nearly all of them
    // (a generated case found the step left out with room for it).
    const request = b.user(`write them ${lines(20, "ask")}`);
    const step = thinking(
      b.assistant(lines(6, "says"), [
        { id: "w1", name: "write", args: { path: "a.txt", content: lines(300, "arg-a") } },
        { id: "w2", name: "write", args: { path: "b.txt", content: lines(40, "arg-b") } },
      ]),
      lines(600, "answered-thought"),
    );
    const results = b.toolResults([{ id: "w1", text: "written" }, { id: "w2", text: "written" }]);
    const messages = [request, step, ...results];
    const answered = createEstimateCounter().count(facts(step).thinking);
    for (const spare of [60, 120, 200]) {
      const budget = tokens.count(request) + answered + spare + 120;
      const result = shrinkToBudget(messages, tokens, { budget, dropOlder: true });
      expect(result.fits, `${result.tokens} tokens for ${budget}`).toBe(true);
      expect(result.dropped, `spare ${spare}`).toEqual([]);
      expect(facts(result.messages[1]).thinking).toBe(facts(step).thinking);
      expect(JSON.stringify(facts(result.messages[1]).toolCalls)).toMatch(SHRINK_MARKER_PATTERN);
      // The step's own text keeps its head and tail (the search for the arguments' share does not
      // replace it with its marker alone).
      expect(facts(result.messages[1]).text, `spare ${spare}`).toMatch(/says/);
      // What fits is kept: a little under the budget (the search aims 2% under its target), not far below.
      expect(result.tokens, `spare ${spare}`).toBeGreaterThan(budget * 0.98 - 40);
    }
  });

  it("sends whole again what it shrank before leaving a summary out, once that freed the room", () => {
    const answer = b.assistant(lines(60, "answer"));
    const messages = [b.adapter.createSummary(lines(500, "summary")), b.user("what now?"), answer];
    const budget = tokens.count(messages[1]) + tokens.count(answer) + 10;
    const result = shrinkToBudget(messages, tokens, { budget, dropOlder: true });
    expect(result.fits).toBe(true);
    expect(result.dropped).toEqual([0]);
    expect(result.messages).toEqual([messages[1], answer]);
    expect(result.messages[1]).toBe(answer);
    expect(result.shrunk).toEqual([]);
  });

  it("leaves nothing out without dropOlder (a compaction's result)", () => {
    const result = shrinkToBudget(conversation(), tokens, { budget: 260 });
    expect(result.dropped).toEqual([]);
    expect(result.messages).toHaveLength(conversation().length);
  });
});
