import { declaredNames, type MessageFacts, namesIn, readToolCall } from "@compaction/core";

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
  /**
   * Other files the evicted messages named (a listing's output, a reply, a command line), oldest
   * first: the files the agent found and talked about, which it goes on to open by name. None
   * unless `evictedNames` is given room for them.
   */
  readonly mentioned?: readonly string[];
  /** Shell commands the evicted messages ran, oldest first: what the agent runs again. None unless asked for. */
  readonly ran?: readonly string[];
}

/** At most this many files and this many declared names in a note, the newest kept: the note stays short. */
export const NOTE_NAMES_LIMIT = 12;

/**
 * The share of a roll's target (in tokens) the note's names may take: 3%, about 1,850 tokens
 * (some 200 paths) at a 128k window, 260 at 32k with the default reserve. Beyond the files worked
 * on and the names declared, the commands run and the other files the evicted messages named: what
 * the agent found by listing and talked about is what it opens next after a roll (measured on the
 * real transcripts: the files of a `find` output 200 messages back, named again in a plan), and a
 * name it sees is one it can search for. A share, not more: a note that outweighs the oldest messages
 * leaves a full window of large outputs nothing worth evicting (measured: at 4% rolling evicted
 * twice as often on claude-code-log at 32k, each roll freeing a few hundred tokens).
 */
export const NOTE_NAMES_SHARE = 0.03;

/**
 * The note that replaces evicted messages:
 * `[Context rolled: N messages evicted (T tokens). Full transcript available via memory_search. Evicted range: <first> to <last>]`,
 * with `unknown` for a missing timestamp. With names, before the closing bracket:
 * `. Files: a.ts, b.ts; declared: run(), Plan; ran: npm test; also named: src/c.ts, docs/` (each
 * part left out when empty): what the agent worked on is what it goes on to use, and a file or
 * name it sees is one it can search for.
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
const RAN_LABEL = "ran: ";
const MENTIONED_LABEL = "also named: ";
/** The labels of the note's name lists, in the order it writes them. */
const LABELS = [FILES_LABEL, DECLARED_LABEL, RAN_LABEL, MENTIONED_LABEL] as const;

function namesPart(names: EvictedNames | undefined): string {
  if (names === undefined) return "";
  const lists = [names.files, names.declared, names.ran ?? [], names.mentioned ?? []];
  const parts = LABELS.flatMap((label, i) => ((lists[i] as readonly string[]).length > 0 ? [`${label}${(lists[i] as readonly string[]).join(", ")}`] : []));
  return parts.length === 0 ? "" : `. ${parts.join("; ")}`;
}

/** How many names `evictedNames` lists. */
export interface NoteNameLimits {
  /** Most files worked on, and most declared names (each). Default `NOTE_NAMES_LIMIT`. */
  readonly limit?: number;
  /**
   * Characters all the note's names may take (the lists joined by ", "): what the files worked on
   * and the declared names leave of it goes to the commands run and then to the other named files
   * (default 0: neither listed).
   */
  readonly namesChars?: number;
  /** Most shell commands listed, the newest kept (default 0: none). */
  readonly commands?: number;
}

/** About this many characters of file names make a token (paths split at every slash and dot). */
const CHARS_PER_NAME_TOKEN = 4;

/** The names a note lists for a roll to `targetTokens` (our count): the newest commands and other named files within `NOTE_NAMES_SHARE` of it. */
export function noteNameLimits(targetTokens: number): NoteNameLimits {
  return { commands: NOTE_NAMES_LIMIT, namesChars: Math.max(0, Math.floor(targetTokens * NOTE_NAMES_SHARE * CHARS_PER_NAME_TOKEN)) };
}

/**
 * The files and declared names of the evicted messages, for the note, and within `namesChars`
 * the commands they ran and the other files they named. A previous eviction note among them (a roll
 * evicts the note of the roll before) passes its names on first, in the order it listed them, so
 * between rolls the lists only grow at their end; past a limit the oldest go (the newest work is
 * the likeliest to be picked up again).
 */
export function evictedNames(facts: readonly MessageFacts[], limits: number | NoteNameLimits = {}): EvictedNames {
  const { limit = NOTE_NAMES_LIMIT, namesChars = 0, commands = 0 } = typeof limits === "number" ? { limit: limits } : limits;
  const files = new Set<string>();
  const declared = new Set<string>();
  const ran = new Set<string>();
  const carried: string[] = [];
  for (const f of facts) {
    // A note is a summary or a custom message, by format (pi's is a custom message): known by its text.
    if (isNote(f)) {
      const names = namesInNote(f.text);
      for (const file of names.files) files.add(file);
      for (const name of names.declared) declared.add(name);
      for (const command of names.ran ?? []) ran.add(command);
      carried.push(...(names.mentioned ?? []));
      continue;
    }
    for (const call of f.toolCalls) {
      const reading = readToolCall(call);
      if (reading.kind === "command" && reading.command !== undefined) {
        const command = reading.command.trim();
        if (command.length <= LONGEST_COMMAND && listable(command)) ran.add(command);
      }
      if (reading.kind !== "read" && reading.kind !== "modify") continue;
      for (const path of reading.paths) if (listable(path)) files.add(path);
      if (reading.kind === "modify") for (const name of declaredNames(call.arguments)) declared.add(name);
    }
  }
  const listed: EvictedNames = { files: newest(files, limit), declared: newest(declared, limit) };
  // What the files and declared names leave of `namesChars` goes to the commands, then to the other files.
  const room = namesChars - joinedLength(listed.files) - joinedLength(listed.declared);
  const commandsRan = room > 0 ? newestWithin(newest(ran, commands), room) : [];
  const withCommands = commandsRan.length > 0 ? { ...listed, ran: commandsRan } : listed;
  const left = room - joinedLength(commandsRan);
  if (left <= 0) return withCommands;
  return { ...withCommands, mentioned: mentionedFiles(facts, carried, new Set(listed.files), left) };
}

function isNote(f: MessageFacts): boolean {
  return f.kind !== "assistant" && f.kind !== "toolResult" && f.text.startsWith(NOTE_START);
}

/** Longer commands (a heredoc, a script) are not listed: the note names what the agent would type again. */
const LONGEST_COMMAND = 120;

/** A folder as the agent writes it: three or more names joined by slashes, the last without a file type (listed with a trailing slash). */
const FOLDER = /^(?:~|\.{1,2})?\/?(?:[\w@.+-]+\/){2,}[\w@+-]+$/;

/** A file's name as the agent writes it: a known file type, or a path with a slash in it that ends in one. */
const FILE_NAME = /^(?:[\w@.+~-]*\/)*[\w.+-]*[\w-]\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|yml|yaml|toml|ini|css|scss|html|vue|svelte|sql|txt|csv|xml|proto|graphql|lock)$/;

/**
 * The files the evicted messages named in their text (outputs, replies, command lines) and the
 * previous note carried, not already in `listed`, newest kept within `maxChars` (joined by ", "),
 * oldest first. Scanned newest first, and no further once the room is full: a roll of a long
 * session reads only as far back as the note has room for.
 */
function mentionedFiles(facts: readonly MessageFacts[], carried: readonly string[], listed: ReadonlySet<string>, maxChars: number): string[] {
  const picked: string[] = [];
  const seen = new Set<string>(listed);
  let chars = 0;
  const take = (found: string): boolean => {
    const name = FILE_NAME.test(found) ? found : FOLDER.test(found) ? `${found}/` : "";
    if (name === "" || seen.has(name) || !listable(name)) return true;
    seen.add(name);
    const cost = name.length + (picked.length === 0 ? 0 : 2);
    if (chars + cost > maxChars) return false;
    chars += cost;
    picked.push(name);
    return true;
  };
  outer: for (let i = facts.length - 1; i >= 0; i--) {
    const f = facts[i] as MessageFacts;
    if (isNote(f)) continue;
    const names = namesOfMessage(f);
    for (let k = names.length - 1; k >= 0; k--) if (!take(names[k] as string)) break outer;
  }
  for (let k = carried.length - 1; k >= 0 && chars < maxChars; k--) if (!take(carried[k] as string)) break;
  return picked.reverse();
}

/** Names of a message's text and tool-call arguments, by its facts (the same object for the same message: a roll plans twice or three times, and the next roll scans the same messages again). */
const messageNames = new WeakMap<MessageFacts, readonly string[]>();

function namesOfMessage(f: MessageFacts): readonly string[] {
  let names = messageNames.get(f);
  if (names === undefined) {
    const texts = [f.text, ...f.toolCalls.map((call) => (typeof call.arguments === "string" ? call.arguments : (JSON.stringify(call.arguments) ?? "")))];
    names = texts.flatMap((text) => namesIn(text));
    messageNames.set(f, names);
  }
  return names;
}

/** The names an eviction note lists (`formatEvictionNote`), or none when `text` is not one. */
export function namesInNote(text: string): EvictedNames {
  const none: EvictedNames = { files: [], declared: [] };
  if (!text.startsWith(NOTE_START) || !text.endsWith("]")) return none;
  const body = text.slice(0, -1);
  // Each list starts at its label (". " before the first, "; " before the others) and ends at the next.
  const starts = LABELS.map((label) => {
    const first = body.indexOf(`. ${label}`);
    const later = body.indexOf(`; ${label}`);
    const at = first !== -1 && (later === -1 || first < later) ? first : later;
    return at === -1 ? -1 : at + 2 + label.length;
  });
  const list = (i: number): string[] => {
    const from = starts[i] as number;
    if (from === -1) return [];
    const next = starts.slice(i + 1).find((at) => at !== -1);
    const to = next === undefined ? body.length : next - 2 - (LABELS[starts.indexOf(next)] as string).length;
    return body.slice(from, to).split(", ").filter((s) => s !== "");
  };
  const ran = list(2);
  const mentioned = list(3);
  return { files: list(0), declared: list(1), ...(ran.length > 0 ? { ran } : {}), ...(mentioned.length > 0 ? { mentioned } : {}) };
}

/** A path that cannot break the note's list apart. */
function listable(path: string): boolean {
  return path.length > 0 && path.length <= 200 && !/[,;\]\n]/.test(path);
}

/** Characters of `names` joined by ", ". */
function joinedLength(names: readonly string[]): number {
  return names.reduce((sum, name, i) => sum + name.length + (i === 0 ? 0 : 2), 0);
}

/** The newest of `names` (oldest first) whose joined length fits `maxChars`, none past the first that does not. */
function newestWithin(names: readonly string[], maxChars: number): string[] {
  const kept: string[] = [];
  let chars = 0;
  for (let i = names.length - 1; i >= 0; i--) {
    const cost = (names[i] as string).length + (kept.length === 0 ? 0 : 2);
    if (chars + cost > maxChars) break;
    chars += cost;
    kept.push(names[i] as string);
  }
  return kept.reverse();
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
