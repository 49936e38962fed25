/**
 * Facts taken from a real transcript's own early messages. The rule, exactly:
 *
 * 1. Only the first third of the messages is read for facts ("early").
 * 2. path: the `path` / `file_path` argument of a read, edit, write or multi-edit tool call.
 *    command: the first line of a bash call's `command` (or of a `!` command the user ran).
 *    error: the first non-blank line of a tool result marked as an error; for other tool
 *    results, the first line with the word "error" (/\berror\b/i). Lines are trimmed and cut at
 *    160 characters.
 * 3. A needle must be at least 8 characters and must not occur in any later message: a fact
 *    the session repeats later is in the context for every preset and says nothing.
 * 4. At most `maxPerKind` per kind, spread evenly over the candidates in session order.
 * 5. The query: the 5 rarest words (by the number of messages of the transcript that hold
 *    them; ties by first appearance) of the fact's message and the message before it, leaving
 *    out the needle, words inside the needle, words under 4 letters and common words.
 * 6. lastRequest: the first line (at most 120 characters) of the last user message whose first
 *    line has at least 8 characters and does not start with "<" (Claude Code's wrappers of local
 *    commands); its query is the 5 rarest words of that message.
 */
import type { PiMessage } from "@compaction/core";
import { messageText } from "@compaction/plugin-recall";
import type { Fact } from "./facts.js";

export interface RealFactOptions {
  /** Most facts per kind. Default 8. */
  readonly maxPerKind?: number;
}

interface Candidate {
  readonly kind: string;
  readonly detail: string;
  readonly needle: string;
  readonly messageIndex: number;
}

const FILE_TOOLS = new Set(["read", "edit", "write", "multiedit", "multi_edit", "notebookedit"]);
const MIN_NEEDLE = 8;
const MAX_LINE = 160;
const QUERY_WORDS = 5;
const WORD = /[a-z][a-z0-9_]{3,}/g;
const COMMON = new Set(
  "that this with from have will what when which there their then them they were been into your about would should could just like also some more than only other here make need file files line lines using used does done sure want dont okay right let's lets".split(" "),
);

/** The facts of one transcript (pi messages), by the rule above. */
export function realFacts(messages: readonly PiMessage[], options: RealFactOptions = {}): Fact[] {
  const maxPerKind = options.maxPerKind ?? 8;
  const texts = messages.map((m) => messageText(m));
  const early = Math.floor(messages.length / 3);
  const later = texts.slice(early);
  const frequency = documentFrequency(texts);

  const candidates: Candidate[] = [];
  const seen = new Set<string>();
  const add = (kind: string, detail: string, raw: string, messageIndex: number): void => {
    const needle = raw.trim().slice(0, MAX_LINE).trim();
    if (needle.length < MIN_NEEDLE || seen.has(needle)) return;
    seen.add(needle);
    if (later.some((text) => text.includes(needle))) return;
    candidates.push({ kind, detail, needle, messageIndex });
  };
  for (let i = 0; i < early; i++) {
    const message = messages[i] as PiMessage;
    if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        const name = block.name.toLowerCase();
        const args = block.arguments ?? {};
        const path = args["path"] ?? args["file_path"];
        if (FILE_TOOLS.has(name) && typeof path === "string") add("path", block.name, path, i);
        if (name === "bash" && typeof args["command"] === "string") add("command", block.name, firstLine(args["command"]), i);
      }
    } else if (message.role === "bashExecution") {
      add("command", "user !", firstLine(message.command), i);
    } else if (message.role === "toolResult") {
      const lines = message.content.flatMap((block) => (block.type === "text" ? block.text.split("\n") : []));
      const line = message.isError ? lines.find((l) => l.trim() !== "") : lines.find((l) => /\berror\b/i.test(l));
      if (line !== undefined) add("error", message.isError ? `${message.toolName} failed` : message.toolName, line, i);
    }
  }

  const facts: Fact[] = [];
  for (const kind of ["path", "command", "error"]) {
    for (const c of spread(candidates.filter((c) => c.kind === kind), maxPerKind)) {
      const around = [texts[c.messageIndex - 1] ?? "", texts[c.messageIndex] ?? ""].join("\n").split(c.needle).join(" ");
      const query = rarestWords(around, frequency, (word) => !c.needle.toLowerCase().includes(word));
      if (query === "") continue;
      facts.push({ kind: c.kind, detail: c.detail, needle: c.needle, query, messageIndex: c.messageIndex, position: "early" });
    }
  }
  const last = lastRequest(messages, texts, frequency);
  if (last !== undefined) facts.push(last);
  return facts.sort((a, b) => a.messageIndex - b.messageIndex);
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

/** At most `max` items, evenly spaced, first and last included. */
function spread<T>(items: readonly T[], max: number): T[] {
  if (items.length <= max) return [...items];
  return Array.from({ length: max }, (_, k) => items[Math.round((k * (items.length - 1)) / (max - 1))] as T);
}

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** In how many messages each word occurs. */
function documentFrequency(texts: readonly string[]): Map<string, number> {
  const frequency = new Map<string, number>();
  for (const text of texts) for (const word of new Set(words(text))) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  return frequency;
}

function rarestWords(text: string, frequency: ReadonlyMap<string, number>, keep: (word: string) => boolean): string {
  const distinct = [...new Set(words(text))].filter((word) => !COMMON.has(word) && keep(word));
  const order = new Map(distinct.map((word, i) => [word, i]));
  return distinct
    .sort((a, b) => (frequency.get(a) ?? 0) - (frequency.get(b) ?? 0) || (order.get(a) ?? 0) - (order.get(b) ?? 0))
    .slice(0, QUERY_WORDS)
    .join(" ");
}

function lastRequest(messages: readonly PiMessage[], texts: readonly string[], frequency: ReadonlyMap<string, number>): Fact | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role !== "user") continue;
    const needle = firstLine(texts[i] ?? "").slice(0, 120).trim();
    if (needle.length < MIN_NEEDLE || needle.startsWith("<")) continue;
    return { kind: "lastRequest", detail: "user", needle, query: rarestWords(texts[i] ?? "", frequency, () => true), messageIndex: i, position: "end" };
  }
  return undefined;
}
