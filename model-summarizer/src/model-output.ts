/**
 * A model's answer made into a summary: reasoning blocks and a wrapping code fence removed, and
 * the text trimmed to the token cap (sections lose their last lines first, headings stay).
 */
import { fitToBudget, parseSections, type SummaryBlock, type TokenCounter } from "@compaction/core";

const THINK_BLOCK = /^\s*<(think|thinking|reasoning)>[\s\S]*?<\/\1>\s*/i;
const WRAPPING_FENCE = /^\s*(`{3,}|~{3,})[\w-]*[ \t]*\r?\n([\s\S]*?)\r?\n\1[ \t]*\s*$/;
const WRAPPING_TAG = /^\s*<(summary|checkpoint)>\s*([\s\S]*?)\s*<\/\1>\s*$/i;
/** One short line ending with a colon before the first heading: "Here is the updated summary:". */
const LEAD_IN = /^[^\n#]{0,200}:[ \t]*\r?\n\s*(?=#{2,3}[ \t])/;

/**
 * The summary in a model's answer: without a leading `<think>…</think>` block (local reasoning
 * models put one in the text), without a code fence or `<summary>` tags around the whole
 * answer, and without a one-line lead-in such as "Here is the summary:"; trimmed.
 */
export function cleanModelOutput(text: string): string {
  let out = text.replace(THINK_BLOCK, "");
  const fenced = WRAPPING_FENCE.exec(out);
  if (fenced) out = fenced[2] ?? "";
  const tagged = WRAPPING_TAG.exec(out);
  if (tagged) out = tagged[2] ?? "";
  return out.trim().replace(LEAD_IN, "");
}

/**
 * `summary` within `maxTokens` as `counter` counts it. Returned unchanged when it fits; otherwise
 * the last lines of the longest sections go first (every heading is kept), then long lines are
 * cut short, and the result never exceeds the cap.
 */
export function fitModelSummary(summary: string, maxTokens: number, counter: TokenCounter): string {
  if (counter.count(summary) <= maxTokens) return summary;
  const parsed = parseSections(summary);
  const blocks: SummaryBlock[] = [];
  const preamble = parsed.preamble.filter((line) => line.trim() !== "");
  if (preamble.length > 0) blocks.push(verbatimBlock(preamble[0] ?? "", preamble.slice(1)));
  for (const section of parsed.sections) blocks.push(verbatimBlock(section.heading, section.lines));
  return fitToBudget(blocks, maxTokens, counter);
}

/** A section whose lines are kept as written; earlier lines rank higher (they are kept longer). */
function verbatimBlock(heading: string, lines: readonly string[]): SummaryBlock {
  const kept = lines.filter((line) => line.trim() !== "");
  return {
    heading,
    style: "verbatim",
    items: kept.map((text, position) => ({ text, rank: kept.length - position })),
    optional: false,
  };
}
