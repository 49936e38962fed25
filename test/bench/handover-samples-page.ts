/**
 * The text of docs/handover-samples.md: what the extractive summarizer writes for the shipped
 * example session and for the two spans of pi-before-compaction.jsonl that a model summarised for
 * pi, each beside the model's summary, with the numbers of the fidelity benchmark's first table.
 * `bench/handover-samples.ts` writes it; `test/handover-samples.test.ts` checks the page is it.
 */
import { fileURLToPath } from "node:url";
import { createPiAdapter, type TokenCounter } from "@compaction/core";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { loadPiMessages } from "@compaction/fixtures";
import { measureSummary, modelSummaryCases, ourSummaries, spanText } from "./fidelity/model-summaries.js";

export const HANDOVER_SAMPLES_PAGE = fileURLToPath(new URL("../../docs/handover-samples.md", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../../examples/sessions/pi-large-session.jsonl", import.meta.url));
const MAX_TOKENS = 4000;

/** The page's text, counted with `counter` (tiktoken o200k). Deterministic. */
export async function handoverSamples(counter: TokenCounter): Promise<string> {
  const adapter = createPiAdapter();
  const fence = (text: string): string => `\`\`\`\`markdown\n${text}\n\`\`\`\``;

  const parts: string[] = [
    "# Handover samples: the extractive summary on real sessions",
    "",
    "Written by `test/bench/handover-samples.ts` (`cd test && npx tsx bench/handover-samples.ts`); do not edit by hand.",
    `Every summary below is the extractive summarizer's (no model) at its default limits and a ${MAX_TOKENS.toLocaleString("en-US")}-token cap;`,
    "token counts are tiktoken o200k_base. The rules the numbers follow are in `test/bench/fidelity/model-summaries.ts`.",
  ];

  const example = loadPiMessages(EXAMPLE);
  const exampleSummary = await createExtractiveSummarizer().summarize({
    messages: example.map((m) => adapter.readFacts(m)),
    maxTokens: MAX_TOKENS,
    counter,
    kind: "history",
  });
  parts.push(
    "",
    "## The shipped example session (examples/sessions/pi-large-session.jsonl), all of it",
    "",
    `${example.length} messages summarised in one run; ${counter.count(exampleSummary).toLocaleString("en-US")} tokens.`,
    "",
    fence(exampleSummary),
  );

  const cases = modelSummaryCases();
  const ours = await ourSummaries(cases, counter);
  cases.forEach((one, index) => {
    const summary = ours[index] ?? "";
    const mine = measureSummary(summary, one.modelSummary, spanText(one.messages), counter);
    parts.push(
      "",
      `## pi-before-compaction.jsonl, ${one.label}`,
      "",
      index === 0
        ? "The span the first `compaction` entry replaced."
        : "The span the second `compaction` entry replaced; ours merges our own summary of the first span (the model merged its own).",
      "",
      `Ours: ${mine.tokens.toLocaleString("en-US")} tokens, ${mine.identifiersKept} of the ${mine.identifiersTotal} identifiers of the model's summary that occur in the span, ${mine.fillerLines} filler lines. The model's: ${counter.count(one.modelSummary).toLocaleString("en-US")} tokens.`,
      "",
      "### Ours (extractive)",
      "",
      fence(summary),
      "",
      "### The model's (as recorded in the session file)",
      "",
      fence(one.modelSummary),
    );
  });

  return `${parts.join("\n")}\n`;
}
