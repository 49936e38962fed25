/**
 * Read-only import of Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`)
 * as Anthropic Messages, so status, inspect, export and compact --dry-run work on them.
 *
 * The main context is the `user` and `assistant` lines that are not sidechain (subagent) lines,
 * in file order. Claude Code streams one response over several `assistant` lines that share
 * `message.id`: they become one message at the first line's place (content blocks concatenated,
 * the last line's usage and stop reason). Compactions are applied: a `system` line with subtype
 * `compact_boundary`, or a user line with `isCompactSummary` (older versions write only that),
 * ends everything before it except the messages its `compactMetadata.preservedMessages` names,
 * which follow the summary, as Claude Code rebuilds them. Other lines (`summary` titles,
 * `system`, `attachment`, `file-history-snapshot`, ...) are not messages. Nothing is written.
 *
 * That is the context Claude Code would send now. `importClaudeCodeHistory` reads the whole
 * recorded conversation instead, for replaying it: Claude Code keeps the lines before each
 * compaction in the file, and the boundary names the last of them (`logicalParentUuid`; its
 * `parentUuid` is null). See that function for its rules.
 */
import { type AnthropicContentBlock, type AnthropicMessage, ErrorCodes } from "@compaction/core";
import { cleanLine, describeJsonError, incompleteTailReason, isBlankLine, readFileText } from "./parse.js";
import { corruptLineError, foundText, TranscriptError, where } from "./transcript-error.js";
import type { LoadProgress, SkippedLine } from "./types.js";

export interface ImportOptions {
  /** Leave out corrupt lines (each is reported in `skipped`) instead of failing. */
  readonly skipCorrupt?: boolean;
  /** Called as the file is read: about once per MiB, then once with `bytesRead === totalBytes`. */
  readonly onProgress?: (progress: LoadProgress) => void;
}

/** One JSON object line of a JSONL file. */
export interface JsonLine {
  /** 1-based line number. */
  readonly line: number;
  readonly value: Record<string, unknown>;
}

export interface JsonLines {
  readonly lines: JsonLine[];
  readonly skipped: SkippedLine[];
  /** The last line had no newline and was not JSON: a write cut short. It is in `skipped`. */
  readonly incompleteTail: boolean;
}

/**
 * Every JSON object line of a JSONL file, read only. A line that is not a JSON object fails
 * with `COMPACTION_TRANSCRIPT_CORRUPT` (file:line) unless `skipCorrupt`; an unterminated last
 * line that is not JSON is an incomplete tail, always skipped and reported.
 */
export function readJsonObjectLines(path: string, options: ImportOptions = {}): JsonLines {
  const text = readFileText(path, options.onProgress);
  const raw = text.split("\n");
  const endsWithNewline = text.endsWith("\n");
  const count = endsWithNewline ? raw.length - 1 : raw.length;
  const lines: JsonLine[] = [];
  const skipped: SkippedLine[] = [];
  let incompleteTail = false;
  for (let i = 0; i < count; i++) {
    const lineText = cleanLine(raw[i] as string, i === 0);
    if (isBlankLine(lineText)) continue;
    let value: unknown;
    let reason: string | undefined;
    try {
      value = JSON.parse(lineText);
      if (typeof value !== "object" || value === null || Array.isArray(value)) reason = "not a JSON object";
    } catch (error) {
      reason = describeJsonError(error);
      if (i === count - 1 && !endsWithNewline) {
        incompleteTail = true;
        skipped.push({ line: i + 1, text: foundText(lineText), reason: incompleteTailReason(reason) });
        continue;
      }
    }
    if (reason === undefined) {
      lines.push({ line: i + 1, value: value as Record<string, unknown> });
      continue;
    }
    if (options.skipCorrupt !== true) throw corruptLineError(path, i + 1, lineText, reason);
    skipped.push({ line: i + 1, text: foundText(lineText), reason });
  }
  return { lines, skipped, incompleteTail };
}

export interface ClaudeCodeImport {
  readonly path: string;
  /** Claude Code's session id (`sessionId` of the lines). */
  readonly sessionId?: string;
  readonly cwd?: string;
  /** Version of the Claude Code CLI that wrote the first message line. */
  readonly version?: string;
  /** The main context after the latest compaction, as Anthropic messages with `timestamp` in ms. */
  readonly messages: AnthropicMessage[];
  /** `uuid` of the line each message comes from (the first line, for a joined response). */
  readonly entryIds: string[];
  /** 1-based line number of each message (the first line, for a joined response). */
  readonly lines: number[];
  /** Compactions found (boundaries applied). */
  readonly compactions: number;
  /** Sidechain (subagent) lines left out of the main context. */
  readonly sidechainLines: number;
  readonly skipped: SkippedLine[];
  readonly incompleteTail: boolean;
}

interface Slot {
  message: AnthropicMessage;
  readonly uuid: string;
  readonly line: number;
}

/** Reads a Claude Code transcript's main context. See the module comment for the rules. */
export function importClaudeCode(path: string, options: ImportOptions = {}): ClaudeCodeImport {
  const { lines, skipped, incompleteTail } = readJsonObjectLines(path, options);
  let slots: Slot[] = [];
  let byResponseId = new Map<string, Slot>();
  let preserved: Slot[] = [];
  let compactions = 0;
  let sidechainLines = 0;
  let info: { sessionId?: string; cwd?: string; version?: string } | undefined;

  const startAfterBoundary = (keep: ReadonlySet<string>): void => {
    compactions += 1;
    preserved = slots.filter((slot) => keep.has(slot.uuid));
    slots = [];
    byResponseId = new Map();
  };
  const flushPreserved = (): void => {
    slots.push(...preserved);
    preserved = [];
  };

  for (const { line, value } of lines) {
    const type = value["type"];
    if (value["isSidechain"] === true) {
      sidechainLines += 1;
      continue;
    }
    if (type === "system" && value["subtype"] === "compact_boundary") {
      startAfterBoundary(preservedUuids(value["compactMetadata"]));
      continue;
    }
    if (type !== "user" && type !== "assistant") continue;
    const message = readMessage(value, type, path, line, options, skipped);
    if (message === undefined) continue;
    info ??= lineInfo(value);
    const uuid = typeof value["uuid"] === "string" ? value["uuid"] : `line:${line}`;
    if (value["isCompactSummary"] === true) {
      // Older versions mark the compaction only with this line; after a boundary it starts the context anyway.
      if (slots.length > 0 || compactions === 0) startAfterBoundary(new Set());
      message.isCompactSummary = true;
      slots.push({ message, uuid, line });
      flushPreserved();
      continue;
    }
    flushPreserved();
    addLine(slots, byResponseId, { message, uuid, line });
  }
  flushPreserved();
  return {
    path,
    ...info,
    messages: slots.map((slot) => slot.message),
    entryIds: slots.map((slot) => slot.uuid),
    lines: slots.map((slot) => slot.line),
    compactions,
    sidechainLines,
    skipped,
    incompleteTail,
  };
}

/** A compaction Claude Code made itself, as the whole history records it. */
export interface RecordedCompaction {
  /** 1-based line of its `compact_boundary` line, or of its summary where older versions wrote only that. */
  readonly line: number;
  /** 1-based line of its summary (`isCompactSummary`), null when the file holds none. */
  readonly summaryLine: number | null;
  /** `compactMetadata.trigger`: `auto` or `manual`; null when not recorded. */
  readonly trigger: string | null;
  /** `compactMetadata.preTokens`: the context's size when it compacted, by Claude's count; null when not recorded. */
  readonly preTokens: number | null;
  /** How many of the history's messages came before it. */
  readonly messagesBefore: number;
}

/** Where the history starts when the file does not hold all of it (see importClaudeCodeHistory). */
export interface HistoryStart {
  /** 1-based line of the compaction the history starts at; its summary is the first message. */
  readonly line: number;
  /** Why what came before it is not read. */
  readonly reason: string;
  /**
   * True when the file holds messages before it that were left out (read with `skipCorrupt`);
   * false when the file starts there (a conversation continued from another file).
   */
  readonly leftOut: boolean;
}

export interface ClaudeCodeHistory {
  readonly path: string;
  readonly sessionId?: string;
  readonly cwd?: string;
  readonly version?: string;
  /** Every main-context message of the conversation, in file order; compaction summaries left out. */
  readonly messages: AnthropicMessage[];
  /** `uuid` of the line each message comes from (the first line, for a joined response). */
  readonly entryIds: string[];
  /** 1-based line number of each message (the first line, for a joined response). */
  readonly lines: number[];
  /** The compactions the recording made, in order (not applied: their summaries are left out). */
  readonly compactions: RecordedCompaction[];
  /** Null when the history starts at the file's start; see HistoryStart. */
  readonly startsAt: HistoryStart | null;
  /** Sidechain (subagent) lines left out of the main context. */
  readonly sidechainLines: number;
  readonly skipped: SkippedLine[];
  readonly incompleteTail: boolean;
}

/**
 * The whole conversation a Claude Code transcript recorded, compactions and all, for replaying it
 * (`compaction compare`). The messages are read as `importClaudeCode` reads them (main context,
 * file order, one message per response), but compactions are not applied:
 * - a `compact_boundary` line is joined to what came before it: its `logicalParentUuid` (else its
 *   `parentUuid`) must name a main-context line between the previous compaction and it. Every
 *   message before it stays in the history; the summary line that follows it is left out, since
 *   it is the recording's own compaction, not conversation. Its preserved messages are in the
 *   history already, at their place.
 * - a summary line without a boundary (older versions) is left out the same way.
 * - a boundary whose join is broken (no link, a uuid no earlier line has, a sidechain line, a line
 *   from before the previous compaction) with messages before it fails with
 *   `COMPACTION_TRANSCRIPT_INVALID` (file:line): the history cannot be told whole. With
 *   `skipCorrupt` the history starts at that compaction instead, its summary the first message,
 *   and `startsAt` says so (`leftOut: true`).
 * - a file that starts with a compaction (no message before it: a conversation continued from
 *   another file) starts its history there, its summary the first message (`startsAt`, `leftOut:
 *   false`): nothing the file holds is left out.
 */
export function importClaudeCodeHistory(path: string, options: ImportOptions = {}): ClaudeCodeHistory {
  const { lines, skipped, incompleteTail } = readJsonObjectLines(path, options);
  const lineOf = new Map<string, { readonly line: number; readonly sidechain: boolean }>();
  for (const { line, value } of lines) {
    if (typeof value["uuid"] === "string" && !lineOf.has(value["uuid"])) lineOf.set(value["uuid"], { line, sidechain: value["isSidechain"] === true });
  }
  let slots: Slot[] = [];
  let byResponseId = new Map<string, Slot>();
  let compactions: RecordedCompaction[] = [];
  let startsAt: HistoryStart | null = null;
  let sidechainLines = 0;
  let info: { sessionId?: string; cwd?: string; version?: string } | undefined;
  // The compaction whose summary line comes next: left out (joined) or kept as the first message.
  let awaiting: { readonly compaction: RecordedCompaction; readonly keepSummary: boolean } | null = null;
  let previousLine = 0;

  const startAt = (line: number, reason: string, leftOut: boolean): void => {
    startsAt = { line, reason, leftOut };
    slots = [];
    byResponseId = new Map();
    compactions = [];
  };

  for (const { line, value } of lines) {
    const type = value["type"];
    if (value["isSidechain"] === true) {
      sidechainLines += 1;
      continue;
    }
    if (type === "system" && value["subtype"] === "compact_boundary") {
      const compaction = recordedCompaction(value, line, slots.length);
      const broken = brokenJoin(value, line, previousLine, lineOf);
      previousLine = line;
      awaiting = { compaction, keepSummary: broken !== undefined };
      if (broken === undefined) compactions.push(compaction);
      else if (slots.length === 0 && compactions.length === 0) startAt(line, `the file starts at a compaction whose boundary ${broken}: what it summarises is not in this file`, false);
      else if (options.skipCorrupt === true) startAt(line, `the compaction boundary ${broken}, so the ${slots.length} messages before it were left out`, true);
      else throw brokenJoinError(path, line, broken, slots.length);
      continue;
    }
    if (type !== "user" && type !== "assistant") continue;
    const message = readMessage(value, type, path, line, options, skipped);
    if (message === undefined) continue;
    info ??= lineInfo(value);
    const uuid = typeof value["uuid"] === "string" ? value["uuid"] : `line:${line}`;
    if (value["isCompactSummary"] === true) {
      const boundary = awaiting;
      awaiting = null;
      if (boundary !== null && !boundary.keepSummary) {
        compactions[compactions.length - 1] = { ...boundary.compaction, summaryLine: line };
        continue;
      }
      if (boundary === null && (slots.length > 0 || compactions.length > 0)) {
        previousLine = line;
        compactions.push({ ...recordedCompaction(value, line, slots.length), summaryLine: line });
        continue;
      }
      if (boundary === null) startAt(line, "the file starts at a compaction summary: what it summarises is not in this file", false);
      message.isCompactSummary = true;
      slots.push({ message, uuid, line });
      continue;
    }
    awaiting = null;
    addLine(slots, byResponseId, { message, uuid, line });
  }
  return {
    path,
    ...info,
    messages: slots.map((slot) => slot.message),
    entryIds: slots.map((slot) => slot.uuid),
    lines: slots.map((slot) => slot.line),
    compactions,
    startsAt,
    sidechainLines,
    skipped,
    incompleteTail,
  };
}

function recordedCompaction(value: Record<string, unknown>, line: number, messagesBefore: number): RecordedCompaction {
  const metadata = value["compactMetadata"] as { trigger?: unknown; preTokens?: unknown } | null | undefined;
  const trigger = metadata?.trigger;
  const preTokens = metadata?.preTokens;
  return {
    line,
    summaryLine: null,
    trigger: typeof trigger === "string" ? trigger : null,
    preTokens: typeof preTokens === "number" && Number.isFinite(preTokens) ? preTokens : null,
    messagesBefore,
  };
}

/**
 * What is wrong with a boundary's join to the line before it (its `logicalParentUuid`, else its
 * `parentUuid`), worded to follow "the boundary"; undefined when it names a main-context line
 * between the previous compaction (`previousLine`) and the boundary.
 */
function brokenJoin(
  value: Record<string, unknown>,
  line: number,
  previousLine: number,
  lineOf: ReadonlyMap<string, { readonly line: number; readonly sidechain: boolean }>,
): string | undefined {
  const link = typeof value["logicalParentUuid"] === "string" ? value["logicalParentUuid"] : value["parentUuid"];
  if (typeof link !== "string") return "has no logicalParentUuid naming the line before it";
  const parent = lineOf.get(link);
  if (parent === undefined) return `names logicalParentUuid "${link}", which no line of the file has`;
  if (parent.sidechain) return `names logicalParentUuid "${link}", line ${parent.line}, a subagent (sidechain) line`;
  if (parent.line >= line) return `names logicalParentUuid "${link}", line ${parent.line}, which comes after it`;
  if (parent.line < previousLine) return `names logicalParentUuid "${link}", line ${parent.line}, from before the previous compaction (line ${previousLine})`;
  return undefined;
}

function brokenJoinError(path: string, line: number, broken: string, messagesBefore: number): TranscriptError {
  return new TranscriptError(
    ErrorCodes.TRANSCRIPT_INVALID,
    `${where(path, line)}: the compaction boundary ${broken}, so the ${messagesBefore} messages before it cannot be joined to the history after it`,
    {
      file: path,
      line,
      hint: "pass skipCorrupt (CLI: --skip-corrupt) to read the history from this compaction on, its summary first; the file is not changed",
    },
  );
}

/**
 * Adds a message line to the context; a later line of a response already in it (Claude Code
 * writes one line per content block, sharing `message.id`) joins that response's first line.
 */
function addLine(slots: Slot[], byResponseId: Map<string, Slot>, slot: Slot): void {
  const { message } = slot;
  const responseId = message.role === "assistant" && typeof message.id === "string" ? message.id : undefined;
  const first = responseId === undefined ? undefined : byResponseId.get(responseId);
  if (first !== undefined) {
    joinResponse(first.message, message);
    return;
  }
  slots.push(slot);
  if (responseId !== undefined) byResponseId.set(responseId, slot);
}

function preservedUuids(metadata: unknown): Set<string> {
  const preserved = (metadata as { preservedMessages?: { uuids?: unknown } } | null | undefined)?.preservedMessages?.uuids;
  return new Set(Array.isArray(preserved) ? preserved.filter((uuid): uuid is string => typeof uuid === "string") : []);
}

function lineInfo(value: Record<string, unknown>): { sessionId?: string; cwd?: string; version?: string } {
  const info: { sessionId?: string; cwd?: string; version?: string } = {};
  if (typeof value["sessionId"] === "string") info.sessionId = value["sessionId"];
  if (typeof value["cwd"] === "string") info.cwd = value["cwd"];
  if (typeof value["version"] === "string") info.version = value["version"];
  return info;
}

/** A copy of the line's `message` with the line's timestamp in ms; a line without one is corrupt. */
function readMessage(
  value: Record<string, unknown>,
  type: "user" | "assistant",
  path: string,
  line: number,
  options: ImportOptions,
  skipped: SkippedLine[],
): AnthropicMessage | undefined {
  const raw = value["message"] as Record<string, unknown> | null | undefined;
  const content = raw?.["content"];
  if (typeof raw !== "object" || raw === null || (typeof content !== "string" && !Array.isArray(content))) {
    const reason = `a "${type}" line without a \`message\` that has \`content\``;
    const text = JSON.stringify(value);
    if (options.skipCorrupt !== true) throw corruptLineError(path, line, text, reason);
    skipped.push({ line, text: foundText(text), reason });
    return undefined;
  }
  const message = { ...raw, role: type } as unknown as AnthropicMessage;
  const time = typeof value["timestamp"] === "string" ? Date.parse(value["timestamp"]) : Number.NaN;
  if (!Number.isNaN(time)) message.timestamp = time;
  return message;
}

/** Adds a later line of the same response to the first one. */
function joinResponse(first: AnthropicMessage, later: AnthropicMessage): void {
  first.content = [...blocksOf(first.content), ...blocksOf(later.content)];
  if (later.usage !== undefined) first.usage = later.usage;
  const stop = (later as unknown as Record<string, unknown>)["stop_reason"];
  if (stop !== undefined && stop !== null) (first as unknown as Record<string, unknown>)["stop_reason"] = stop;
}

function blocksOf(content: AnthropicMessage["content"]): AnthropicContentBlock[] {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}
