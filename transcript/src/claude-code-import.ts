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
 */
import type { AnthropicContentBlock, AnthropicMessage } from "@compaction/core";
import { cleanLine, describeJsonError, incompleteTailReason, isBlankLine, readFileText } from "./parse.js";
import { corruptLineError, foundText } from "./transcript-error.js";
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
    const responseId = type === "assistant" && typeof message.id === "string" ? message.id : undefined;
    const first = responseId === undefined ? undefined : byResponseId.get(responseId);
    if (first !== undefined) {
      joinResponse(first.message, message);
      continue;
    }
    const slot = { message, uuid, line };
    slots.push(slot);
    if (responseId !== undefined) byResponseId.set(responseId, slot);
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
