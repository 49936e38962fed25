/**
 * Loaders for the real transcripts in `../shared/fixtures/real/` (see PROVENANCE.md there).
 * A test helper, not the transcript module: it reads the files as they are and never writes.
 */
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AnthropicMessage } from "../messages/anthropic-adapter.js";
import type { PiMessage } from "../messages/pi-adapter.js";

/**
 * Absolute path of the real transcripts: `COMPACTION_FIXTURES_DIR` when set, else
 * `<repo>/../shared/fixtures/real` (the same depth from `src/testing/` and `dist/testing/`).
 */
export const FIXTURES_DIR: string =
  process.env["COMPACTION_FIXTURES_DIR"] ?? fileURLToPath(new URL("../../../../shared/fixtures/real", import.meta.url));

/** The pi-coding-agent session files (JSONL version 1). */
export const PI_FIXTURES: readonly string[] = Object.freeze([
  "pi-large-session.jsonl",
  "pi-before-compaction.jsonl",
]);

/** The Claude Code transcripts. */
export const CLAUDE_FIXTURES: readonly string[] = Object.freeze([
  "claude-code-log-37f83ec9.jsonl",
  "claude-code-deep-manifest-a7da6a22.jsonl",
  "claude-code-worktrees-ef958aa1.jsonl",
  "claude-code-viewer-fe5e1c67.jsonl",
]);

type Json = Record<string, unknown>;

function fixturePath(file: string): string {
  return isAbsolute(file) ? file : join(FIXTURES_DIR, file);
}

/** Parses every non-blank line; a bad line throws naming the file and its 1-based line number. */
function readJsonLines(file: string): Json[] {
  const path = fixturePath(file);
  const lines = readFileSync(path, "utf8").split("\n");
  const entries: Json[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new Error(
        `${path}:${index + 1}: expected one JSON object per line, but the line does not parse (${(error as Error).message}).`,
      );
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new Error(`${path}:${index + 1}: expected a JSON object, found ${JSON.stringify(value)?.slice(0, 40)}.`);
    }
    entries.push(value as Json);
  });
  return entries;
}

function messageOf(entry: Json): PiMessage | undefined {
  return entry["type"] === "message" ? (entry["message"] as PiMessage) : undefined;
}

function messagesOf(entries: readonly Json[]): PiMessage[] {
  const messages: PiMessage[] = [];
  for (const entry of entries) {
    const message = messageOf(entry);
    if (message !== undefined) messages.push(message);
  }
  return messages;
}

/**
 * pi's boundary rule for a linear v1 file: the latest `compaction` entry becomes a
 * `compactionSummary`, followed by the messages from entry `firstKeptEntryIndex` (an index into
 * the file's entries, the session header being entry 0) up to the compaction, then every
 * message after it. As in pi's v1 migration, an index that names no entry or the header keeps
 * nothing from before the compaction.
 */
function contextMessages(entries: readonly Json[]): PiMessage[] {
  let latest = -1;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i]?.["type"] === "compaction") {
      latest = i;
      break;
    }
  }
  if (latest < 0) return messagesOf(entries);
  const compaction = entries[latest] as Json;
  const summary: PiMessage = {
    role: "compactionSummary",
    summary: String(compaction["summary"] ?? ""),
    tokensBefore: Number(compaction["tokensBefore"] ?? 0),
    timestamp: new Date(String(compaction["timestamp"])).getTime(),
  };
  const firstKept = compaction["firstKeptEntryIndex"];
  const keepsBefore =
    typeof firstKept === "number" && entries[firstKept] !== undefined && entries[firstKept]?.["type"] !== "session";
  const kept = keepsBefore ? messagesOf(entries.slice(firstKept as number, latest)) : [];
  return [summary, ...kept, ...messagesOf(entries.slice(latest + 1))];
}

/**
 * The messages of a pi v1 session file, in file order: `entry.message` of every `message` entry.
 * With `context: true`, what pi would send to the model after loading the file (boundary rule).
 * `file` is a name in FIXTURES_DIR or an absolute path.
 */
export function loadPiMessages(file: string, options: { context?: boolean } = {}): PiMessage[] {
  const entries = readJsonLines(file);
  return options.context === true ? contextMessages(entries) : messagesOf(entries);
}

/**
 * The main-chain messages of a Claude Code transcript as Anthropic `message` objects: `user` and
 * `assistant` lines that are not sidechain (subagent) lines. Assistant lines sharing `message.id`
 * (one response streamed over several lines) become one message at the first line's place, with
 * their content blocks concatenated and the last line's usage. Adjacent user lines stay separate.
 * `isCompactSummary` is copied onto the message when the line has it.
 */
export function loadClaudeMessages(file: string): AnthropicMessage[] {
  const messages: AnthropicMessage[] = [];
  const byResponseId = new Map<string, AnthropicMessage>();
  for (const line of readJsonLines(file)) {
    const type = line["type"];
    if ((type !== "user" && type !== "assistant") || line["isSidechain"] === true) continue;
    const message = { ...(line["message"] as AnthropicMessage) };
    if (line["isCompactSummary"] === true) message.isCompactSummary = true;
    const responseId = type === "assistant" && typeof message.id === "string" ? message.id : undefined;
    if (responseId === undefined) {
      messages.push(message);
      continue;
    }
    const first = byResponseId.get(responseId);
    if (first === undefined) {
      byResponseId.set(responseId, message);
      messages.push(message);
      continue;
    }
    first.content = [...blocksOf(first.content), ...blocksOf(message.content)];
    if (message.usage !== undefined) first.usage = message.usage;
  }
  return messages;
}

function blocksOf(content: AnthropicMessage["content"]): Exclude<AnthropicMessage["content"], string> {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}
