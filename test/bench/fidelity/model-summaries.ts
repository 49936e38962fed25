/**
 * Our extractive summary beside the summaries a model wrote for pi in
 * `pi-before-compaction.jsonl`: the same span (the messages each `compaction` entry replaced),
 * measured the same way. The rules, exactly:
 *
 * 1. Span of compaction k: the `message` entries from the previous compaction's
 *    `firstKeptEntryIndex` (the session start for the first) up to this compaction's
 *    `firstKeptEntryIndex`. Ours gets those messages and, from the second on, our own previous
 *    summary as `previousSummary` (as a host would chain them); the model got its own.
 * 2. Identifiers of a summary: text in backticks, paths (a word with a `/` and a letter),
 *    calls (`name()`), flags (`--name`), and camelCase / snake_case / PascalCase names of at least
 *    two parts, each taken once. Retention: of the model summary's identifiers that occur
 *    verbatim in the span's text (message text, tool arguments, tool output), the share that
 *    occurs verbatim in ours.
 * 3. Filler line: an item line (list marker and checkbox removed) that opens with chatter:
 *    "Now", "Good", "Great", "Perfect", "OK", "Let me", "Let's", "I'll", "You're (absolutely)
 *    right", "That's (much) better", "See how", "Revert", "Looks good", "Hmm", "Wait", "Done".
 * 4. Size: tokens of the summary by the benchmark's counter.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createPiAdapter, type MessageFacts, type PiMessage, type TokenCounter } from "@compaction/core";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { markdownTable } from "./table.js";

/** The fixture with real model-written compaction summaries. */
export const MODEL_SUMMARY_FIXTURE = "pi-before-compaction.jsonl";
/** Summary budget: the configured default limit of a summary. */
const SUMMARY_MAX_TOKENS = 4000;

/** One compaction of the fixture: what it replaced and what the model wrote. */
export interface ModelSummaryCase {
  readonly label: string;
  readonly messages: readonly PiMessage[];
  readonly modelSummary: string;
}

/** One summary's numbers. */
export interface SummaryMeasure {
  readonly identifiersKept: number;
  readonly identifiersTotal: number;
  readonly missed: readonly string[];
  readonly fillerLines: number;
  readonly tokens: number;
}

const adapter = createPiAdapter();

/** The compactions of `pi-before-compaction.jsonl`, each with the span it replaced. */
export function modelSummaryCases(): ModelSummaryCase[] {
  const entries = readFileSync(join(FIXTURES_DIR, MODEL_SUMMARY_FIXTURE), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const cases: ModelSummaryCase[] = [];
  let start = 0;
  entries.forEach((entry, index) => {
    if (entry["type"] !== "compaction") return;
    const end = Number(entry["firstKeptEntryIndex"]);
    const messages = entries
      .slice(start, end)
      .filter((e) => e["type"] === "message")
      .map((e) => e["message"] as PiMessage);
    cases.push({ label: `compaction ${cases.length + 1} (entry ${index}: entries ${start}–${end - 1}, ${messages.length} messages)`, messages, modelSummary: String(entry["summary"]) });
    start = end;
  });
  return cases;
}

/** Our summaries of the cases, chained: each gets the previous one as `previousSummary`. */
export async function ourSummaries(cases: readonly ModelSummaryCase[], counter: TokenCounter): Promise<string[]> {
  const summarizer = createExtractiveSummarizer();
  const summaries: string[] = [];
  for (const one of cases) {
    const previous = summaries[summaries.length - 1];
    summaries.push(
      await summarizer.summarize({
        messages: one.messages.map((m) => adapter.readFacts(m)),
        maxTokens: SUMMARY_MAX_TOKENS,
        counter,
        kind: "history",
        ...(previous === undefined ? {} : { previousSummary: previous }),
      }),
    );
  }
  return summaries;
}

const BACKTICKED = /`([^`\n]{2,120})`/g;
const PATH = /(?:~|\.{1,2})?\/?[\w.@-]+(?:\/[\w.@-]+)+\/?/g;
const CALL = /\b[A-Za-z_$][\w$]*\(\)/g;
const FLAG = /(?<![\w-])--[a-z][\w-]+/g;
const COMPOUND = /\b(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[a-z]+_[a-z_]+)\b/g;
const HAS_LETTER = /[A-Za-z]/;

/** The identifiers of a text by rule 2, each once, in order of appearance. */
export function identifiersOf(text: string): string[] {
  const found = new Set<string>();
  const add = (value: string): void => {
    const trimmed = value.trim().replace(/[.,:;]+$/, "");
    if (trimmed.length >= 3 && HAS_LETTER.test(trimmed)) found.add(trimmed);
  };
  for (const match of text.matchAll(BACKTICKED)) add(match[1] ?? "");
  for (const pattern of [PATH, CALL, FLAG, COMPOUND]) for (const match of text.matchAll(pattern)) add(match[0]);
  return [...found];
}

/** Everything a span says, for "does the identifier occur in the span". */
export function spanText(messages: readonly PiMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    let facts: MessageFacts;
    try {
      facts = adapter.readFacts(message);
    } catch {
      continue;
    }
    parts.push(facts.text);
    for (const call of facts.toolCalls) parts.push(typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments));
    // Arguments as the model saw them, with real line breaks and quotes.
    for (const call of facts.toolCalls) {
      if (typeof call.arguments === "object" && call.arguments !== null) {
        for (const value of Object.values(call.arguments as Record<string, unknown>)) if (typeof value === "string") parts.push(value);
      }
    }
  }
  return parts.join("\n");
}

const ITEM_MARKER = /^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s*)?/;
const FILLER_OPENER =
  /^(?:now\b|good\b|great\b|perfect\b|ok\b|okay\b|let me\b|let['’]s\b|i['’]ll\b|you['’]re (?:absolutely )?right\b|that['’]s (?:much )?better\b|see how\b|revert\b|looks good\b|hmm\b|wait\b|done\b)/i;

/** Item lines of `summary` that open with chatter (rule 3). */
export function fillerLines(summary: string): string[] {
  const lines: string[] = [];
  for (const line of summary.split("\n")) {
    const marker = ITEM_MARKER.exec(line);
    if (marker === null) continue;
    const text = line.slice(marker[0].length).replace(/^[*_`]+/, "");
    if (FILLER_OPENER.test(text)) lines.push(line.trim());
  }
  return lines;
}

/** Rules 2–4 for one summary against the model's summary of the same span. */
export function measureSummary(summary: string, modelSummary: string, span: string, counter: TokenCounter): SummaryMeasure {
  const wanted = identifiersOf(modelSummary).filter((identifier) => span.includes(identifier));
  const missed = wanted.filter((identifier) => !summary.includes(identifier));
  return {
    identifiersKept: wanted.length - missed.length,
    identifiersTotal: wanted.length,
    missed,
    fillerLines: fillerLines(summary).length,
    tokens: counter.count(summary),
  };
}

const pct = (kept: number, total: number): string => (total === 0 ? "-" : `${Math.round((100 * kept) / total)}%`);

/** The table: per compaction, the model's summary and ours. */
export async function modelSummaryTable(counter: TokenCounter): Promise<{ rows: string[][]; text: string }> {
  const cases = modelSummaryCases();
  const ours = await ourSummaries(cases, counter);
  const rows: string[][] = [];
  const missedLines: string[] = [];
  cases.forEach((one, index) => {
    const span = spanText(one.messages);
    const model = measureSummary(one.modelSummary, one.modelSummary, span, counter);
    const mine = measureSummary(ours[index] ?? "", one.modelSummary, span, counter);
    rows.push([one.label, "model (pi)", "100%", String(model.fillerLines), String(model.tokens)]);
    rows.push(["", "extractive", `${pct(mine.identifiersKept, mine.identifiersTotal)} (${mine.identifiersKept}/${mine.identifiersTotal})`, String(mine.fillerLines), String(mine.tokens)]);
    if (mine.missed.length > 0) missedLines.push(`- compaction ${index + 1}, missed: ${mine.missed.map((m) => `\`${m}\``).join(", ")}`);
  });
  const header = ["span", "summary", "identifiers of the model's kept", "filler lines", "tokens"];
  const table = markdownTable(header, rows);
  return { rows: [header, ...rows], text: missedLines.length === 0 ? table : `${table}\n\n${missedLines.join("\n")}` };
}
