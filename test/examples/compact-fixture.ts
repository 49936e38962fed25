/**
 * The main job on built-in defaults: compact a real pi-coding-agent session with the default
 * preset (safeguard + last-turn-injection) and the embedded extractive summarizer — no model,
 * no API key — and print before/after.
 *
 *   npm run example [-- <session.jsonl> [contextWindow]]
 *
 * Put a .compactionrc in the working directory to try another preset (e.g. `preset: rolling`).
 */
import { createCompactor, type PiMessage } from "@compaction/core";
import { loadPiMessages } from "@compaction/fixtures";

const file = process.argv[2] ?? "pi-large-session.jsonl";
const contextWindow = process.argv[3] === undefined ? undefined : Number(process.argv[3]);

// No .compactionrc is needed: createCompactor falls back to the defaults (preset safeguard,
// pi messages, tiktoken o200k_base, a 200,000-token window).
// INIT_CWD: where `npm run` was called, not the workspace folder npm runs the script in.
const compactor = await createCompactor<PiMessage>({ cwd: process.env["INIT_CWD"] ?? process.cwd() });
const messages = loadPiMessages(file);

const started = performance.now();
const result = await compactor.compact({ messages, ...(contextWindow ? { contextWindow } : {}) });
const ms = performance.now() - started;

const fmt = (n: number) => n.toLocaleString("en-US");
const window = contextWindow ?? compactor.contextWindow ?? 0;
console.log(`session:        ${file}`);
console.log(`preset:         ${(compactor.config as { preset: string }).preset} (${compactor.plugins.map((p) => p.name).join(" + ")})`);
console.log(`context window: ${fmt(window)} tokens`);
console.log(`status:         ${result.status}${result.reason ? ` (${result.reason})` : ""}`);
console.log(`before:         ${fmt(messages.length)} messages, ${fmt(result.tokensBefore)} tokens`);
// Before is the provider's measure (its usage figure); After is in the same measure (our count of
// what is left at Before's ratio to our count of the input). countedTokensAfter is our plain
// count, the measure the budget and the cut check use.
console.log(`after:          ${fmt(result.messages.length)} messages, ${fmt(result.tokensAfter)} tokens (our count: ${fmt(result.countedTokensAfter ?? 0)})`);
if (result.cut) {
  console.log(
    `cut:            ${fmt(result.cut.compactedIndices.length)} messages summarised, first kept #${result.cut.firstKeptIndex}` +
      (result.cut.isSplitTurn ? ` (split turn from #${result.cut.turnStartIndex})` : ""),
  );
}
for (const warning of result.warnings) console.log(`warning:        ${warning}`);
console.log(`took:           ${ms.toFixed(0)} ms`);
compactor.dispose();
if (result.summary) {
  const lines = result.summary.split("\n");
  console.log(`\nsummary (${fmt(lines.length)} lines, first 40):\n`);
  console.log(lines.slice(0, 40).join("\n"));
  if (lines.length > 40) console.log(`... (${fmt(lines.length - 40)} more lines)`);
}
