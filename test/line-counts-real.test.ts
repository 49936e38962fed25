/**
 * Counting line by line (core/src/tokens/line-segments.ts) on the real transcripts: the texts
 * agents really wrote, cut at line starts, count exactly what tiktoken counts them whole, and a
 * compaction whose summary is counted line by line reports exactly tiktoken's count of what it
 * returns.
 */
import { createRequire } from "node:module";
import {
  createAnthropicAdapter,
  createOpenAIAdapter,
  createCompactor,
  createPiAdapter,
  FactsCache,
  forEachLineSegment,
  IMAGE_TOKENS,
  type MessageAdapter,
  messageTokenText,
} from "@compaction/core";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { afterAll, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

// The very tiktoken module the core's counter loads (a second instance would work as well, but costs a second start).
const tiktoken = createRequire(import.meta.resolve("@compaction/core"))("tiktoken") as typeof import("tiktoken");
const encoders = { o200k_base: tiktoken.get_encoding("o200k_base"), cl100k_base: tiktoken.get_encoding("cl100k_base") };
afterAll(() => Object.values(encoders).forEach((encoder) => encoder.free()));

const FIXTURES = [
  ...PI_FIXTURES.map((file) => ({ file, adapter: "pi" as const, load: () => loadPiMessages(file) as unknown[] })),
  ...CLAUDE_FIXTURES.map((file) => ({ file, adapter: "anthropic" as const, load: () => loadClaudeMessages(file) as unknown[] })),
  ...CODEX_FIXTURES.map((file) => ({ file, adapter: "openai" as const, load: () => loadCodexMessages(file) as unknown[] })),
];

const adapterFor = (name: "pi" | "anthropic" | "openai"): MessageAdapter<unknown> =>
  (name === "pi" ? createPiAdapter() : name === "anthropic" ? createAnthropicAdapter() : createOpenAIAdapter()) as MessageAdapter<unknown>;

describe("line-by-line counts on the real transcripts", () => {
  it.each(FIXTURES)("$file: every message's text, cut at line starts, counts as o200k and cl100k count it whole", async ({ adapter, load }) => {
    const facts = new FactsCache(adapterFor(adapter));
    const messages = load();
    let cut = 0;
    for (const [name, encoder] of Object.entries(encoders)) {
      const mismatches: string[] = [];
      for (const message of messages) {
        const text = messageTokenText(facts.of(message));
        let parts = 0;
        let sum = 0;
        forEachLineSegment(text, (segment) => {
          parts += 1;
          sum += segment === "" ? 0 : encoder.encode_ordinary(segment).length;
        });
        if (parts > 1) cut += 1;
        if (sum !== encoder.encode_ordinary(text).length) mismatches.push(`${name}: ${JSON.stringify(text.slice(0, 80))}`);
      }
      expect(mismatches).toEqual([]);
    }
    expect(cut).toBeGreaterThan(0); // the transcript has texts that were cut, so the check compared something
  });

  it.each(FIXTURES)("$file: every preset's tokensAfter is tiktoken's o200k count of the messages it returns", async ({ adapter, load }) => {
    const messages = load();
    const facts = new FactsCache(adapterFor(adapter));
    const direct = (output: readonly unknown[]) =>
      output.reduce<number>((sum, message) => {
        const read = facts.of(message);
        return sum + encoders.o200k_base.encode_ordinary(messageTokenText(read)).length + read.imageCount * IMAGE_TOKENS;
      }, 0);
    for (const preset of ["safeguard", "layered", "sliding-window", "rolling"]) {
      // A window a third of the transcript, so every transcript, the short ones too, is compacted.
      const compactor = await createCompactor({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify({ adapter, preset, reserveTokens: 1_000 }) }) });
      try {
        const window = Math.max(4_000, Math.floor(compactor.tokens.total(messages) / 3));
        const result = await compactor.compact({ messages, contextWindow: window, trigger: "auto" });
        expect(result.status, `${preset}: ${result.reason ?? ""}`).toBe("compacted");
        expect(result.countedTokensAfter, preset).toBe(direct(result.messages));
      } finally {
        compactor.dispose();
      }
    }
  });
});
