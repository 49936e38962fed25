/**
 * The main job on built-in defaults: compact a real pi-coding-agent session with the core's
 * embedded extractive summarizer (no model, no API key) and print before/after.
 *
 *   npm run example [-- <session.jsonl> [contextWindow]]
 */
import {
  Compactor,
  type CompactionPlugin,
  createPiAdapter,
  createTiktokenCounter,
  findCutPoint,
  type PiMessage,
  summarizeCut,
} from "@compaction/core";
import { loadPiMessages } from "@compaction/core/testing";

const file = process.argv[2] ?? "pi-large-session.jsonl";
const contextWindow = Number(process.argv[3] ?? 128_000);

/** A minimal strategy: keep the newest 20% of the window verbatim, summarise the rest. */
const keepRecent: CompactionPlugin = {
  name: "example-keep-recent",
  apply(compactor) {
    compactor.hooks.selectCut.tap("example-keep-recent", (run) =>
      findCutPoint(run.view, { keepRecentTokens: Math.floor(run.contextWindow * 0.2) }),
    );
    compactor.hooks.summarize.tapPromise("example-keep-recent", async (draft, run) => ({
      ...draft,
      text: await summarizeCut(run, { maxTokens: 4000 }),
    }));
  },
};

const messages = loadPiMessages(file);
const compactor = new Compactor<PiMessage>({
  adapter: createPiAdapter(),
  tokenCounter: createTiktokenCounter(),
  plugins: [keepRecent],
  contextWindow,
});

const started = performance.now();
const result = await compactor.compact({ messages });
const ms = performance.now() - started;
compactor.dispose();

const fmt = (n: number) => n.toLocaleString("en-US");
console.log(`session:        ${file}`);
console.log(`context window: ${fmt(contextWindow)} tokens`);
console.log(`status:         ${result.status}${result.reason ? ` (${result.reason})` : ""}`);
console.log(`before:         ${fmt(messages.length)} messages, ${fmt(result.tokensBefore)} tokens`);
console.log(`after:          ${fmt(result.messages.length)} messages, ${fmt(result.tokensAfter)} tokens`);
if (result.cut) {
  console.log(
    `cut:            ${fmt(result.cut.compactedIndices.length)} messages summarised, first kept #${result.cut.firstKeptIndex}` +
      (result.cut.isSplitTurn ? ` (split turn from #${result.cut.turnStartIndex})` : ""),
  );
}
for (const warning of result.warnings) console.log(`warning:        ${warning}`);
console.log(`took:           ${ms.toFixed(0)} ms`);
if (result.summary) {
  const lines = result.summary.split("\n");
  console.log(`\nsummary (${fmt(lines.length)} lines, first 40):\n`);
  console.log(lines.slice(0, 40).join("\n"));
}
