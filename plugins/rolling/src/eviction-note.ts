import { declaredNames, type MessageFacts, readToolCall } from "@compaction/core";

/** The facts the eviction note reports. */
export interface EvictionNoteFacts {
  /** Number of evicted messages. */
  readonly count: number;
  /** Tokens of the evicted messages. */
  readonly tokens: number;
  /** ISO time of the oldest evicted message that has one, or null. */
  readonly firstTimestamp: string | null;
  /** ISO time of the newest evicted message that has one, or null. */
  readonly lastTimestamp: string | null;
  /** The tool the agent recalls evicted messages with. Default `memory_search`. */
  readonly recallTool?: string;
  /** Files and declared names the evicted messages worked on (`evictedNames`); none by default. */
  readonly names?: EvictedNames;
}

/** What the evicted messages worked on, named in the note so the agent knows what to search for. */
export interface EvictedNames {
  /** Files the evicted tool calls read or modified, oldest first. */
  readonly files: readonly string[];
  /** Functions, methods, classes and types the evicted edits declared (`name()` for functions), oldest first. */
  readonly declared: readonly string[];
}

/** At most this many files and this many declared names in a note, the newest kept: the note stays short. */
export const NOTE_NAMES_LIMIT = 12;

/**
 * The note that replaces evicted messages:
 * `[Context rolled: N messages evicted (T tokens). Full transcript available via memory_search. Evicted range: <first> to <last>]`,
 * with `unknown` for a missing timestamp. With names, before the closing bracket:
 * `. Files: a.ts, b.ts; declared: run(), Plan` (either part left out when empty): what the agent
 * worked on is what it goes on to use, and a file or name it sees is one it can search for.
 */
export function formatEvictionNote(note: EvictionNoteFacts): string {
  const tool = note.recallTool ?? "memory_search";
  const first = note.firstTimestamp ?? "unknown";
  const last = note.lastTimestamp ?? "unknown";
  return `[Context rolled: ${note.count} messages evicted (${note.tokens} tokens). Full transcript available via ${tool}. Evicted range: ${first} to ${last}${namesPart(note.names)}]`;
}

const NOTE_START = "[Context rolled:";
const FILES_LABEL = "Files: ";
const DECLARED_LABEL = "declared: ";

function namesPart(names: EvictedNames | undefined): string {
  if (names === undefined) return "";
  const parts: string[] = [];
  if (names.files.length > 0) parts.push(`${FILES_LABEL}${names.files.join(", ")}`);
  if (names.declared.length > 0) parts.push(`${DECLARED_LABEL}${names.declared.join(", ")}`);
  return parts.length === 0 ? "" : `. ${parts.join("; ")}`;
}

/**
 * The files and declared names of the evicted messages, for the note. A previous eviction note
 * among them (a roll evicts the note of the roll before) passes its names on first, in the order
 * it listed them, so between rolls the list only grows at its end; past `limit` the oldest go
 * (the newest work is the likeliest to be picked up again).
 */
export function evictedNames(facts: readonly MessageFacts[], limit = NOTE_NAMES_LIMIT): EvictedNames {
  const files = new Set<string>();
  const declared = new Set<string>();
  for (const f of facts) {
    // A note is a summary or a custom message, by format (pi's is a custom message): known by its text.
    if (f.kind !== "assistant" && f.kind !== "toolResult" && f.text.startsWith(NOTE_START)) {
      const carried = namesInNote(f.text);
      for (const file of carried.files) files.add(file);
      for (const name of carried.declared) declared.add(name);
      continue;
    }
    for (const call of f.toolCalls) {
      const reading = readToolCall(call);
      if (reading.kind !== "read" && reading.kind !== "modify") continue;
      for (const path of reading.paths) if (listable(path)) files.add(path);
      if (reading.kind === "modify") for (const name of declaredNames(call.arguments)) declared.add(name);
    }
  }
  return { files: newest(files, limit), declared: newest(declared, limit) };
}

/** The names an eviction note lists (`formatEvictionNote`), or none when `text` is not one. */
export function namesInNote(text: string): EvictedNames {
  const none: EvictedNames = { files: [], declared: [] };
  if (!text.startsWith(NOTE_START) || !text.endsWith("]")) return none;
  const body = text.slice(0, -1);
  const filesAt = body.indexOf(`. ${FILES_LABEL}`);
  const declaredAt = body.indexOf(`${filesAt === -1 ? ". " : "; "}${DECLARED_LABEL}`);
  const list = (from: number, to: number) => (from === -1 ? [] : body.slice(from, to === -1 ? undefined : to).split(", ").filter((s) => s !== ""));
  return {
    files: list(filesAt === -1 ? -1 : filesAt + 2 + FILES_LABEL.length, declaredAt),
    declared: list(declaredAt === -1 ? -1 : declaredAt + 2 + DECLARED_LABEL.length, -1),
  };
}

/** A path that cannot break the note's list apart. */
function listable(path: string): boolean {
  return path.length > 0 && path.length <= 200 && !/[,;\]\n]/.test(path);
}

function newest(names: ReadonlySet<string>, limit: number): string[] {
  const all = [...names];
  return all.slice(Math.max(0, all.length - limit));
}

/** A millisecond timestamp as an ISO 8601 string, or null when missing or out of range. */
export function isoTimestamp(ms: number | undefined): string | null {
  if (ms === undefined || !Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** ISO times of the first and last messages (in order) that carry a timestamp. */
export function timestampRange(facts: readonly MessageFacts[]): { first: string | null; last: string | null } {
  let first: string | null = null;
  let last: string | null = null;
  for (const f of facts) {
    const iso = isoTimestamp(f.timestamp);
    if (iso === null) continue;
    first ??= iso;
    last = iso;
  }
  return { first, last };
}
