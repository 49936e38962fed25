/**
 * Which kind of transcript a file is, from its first lines: a pi-coding-agent session (header
 * line `{"type":"session"}`), a Codex CLI rollout (`session_meta`, `response_item`, ... lines)
 * or a Claude Code transcript (lines with `sessionId` or Claude Code's line types).
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { ErrorCodes } from "@compaction/core";
import { readLeadingLines } from "./leading-lines.js";
import { unreadableFileError } from "./parse.js";
import { TranscriptError } from "./transcript-error.js";

export type TranscriptFormat = "pi" | "claude-code" | "codex";

/** The message format each transcript format's messages come in. */
export const TRANSCRIPT_ADAPTERS: Readonly<Record<TranscriptFormat, "pi" | "anthropic" | "openai">> = Object.freeze({
  pi: "pi",
  "claude-code": "anthropic",
  codex: "openai",
});

const PI_HEADER_START = /^\s*\{\s*"type"\s*:\s*"session"/;
const CODEX_TYPES = new Set(["session_meta", "response_item", "turn_context", "event_msg", "compacted"]);
const CLAUDE_CODE_TYPES = new Set(["user", "assistant", "summary", "system", "file-history-snapshot", "attachment"]);
/** Non-blank lines looked at before giving up; Claude Code files can start with a few title lines. */
const MAX_LINES = 20;
/** Most bytes read looking for them (a line can hold a large tool output). */
const MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * Reads the start of `path` and names its format. Throws `COMPACTION_TRANSCRIPT_INVALID` naming
 * the file when none of the first lines says (an empty file, or not a transcript).
 */
export function detectTranscriptFormat(path: string): TranscriptFormat {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw unreadableFileError(path, error);
  }
  let lines: string[];
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) throw unreadableFileError(path, new Error("it is a directory, not a file"));
    try {
      lines = readLeadingLines(fd, stats.size, { count: MAX_LINES, maxBytes: MAX_READ_BYTES }).lines.map((line) => line.text);
    } catch (error) {
      throw unreadableFileError(path, error);
    }
    const format = formatOf(lines);
    if (format !== undefined) return format;
  } finally {
    closeSync(fd);
  }
  const first = lines.find((line) => line.trim() !== "");
  throw new TranscriptError(
    ErrorCodes.TRANSCRIPT_INVALID,
    first === undefined
      ? `${path} is empty: expected a pi session, Claude Code transcript or Codex rollout (JSON lines).`
      : `${path} is not a transcript this tool reads: expected a pi session header ({"type":"session",...}), Claude Code lines or Codex rollout lines, found '${first.slice(0, 80)}'.`,
    { file: path, hint: "Pass a pi-coding-agent / OpenClaw session file, a Claude Code transcript (~/.claude/projects/*/*.jsonl) or a Codex rollout (~/.codex/sessions/**/rollout-*.jsonl)." },
  );
}

function formatOf(lines: readonly string[]): TranscriptFormat | undefined {
  const first = lines.find((line) => line.trim() !== "");
  // A pi header cut short or otherwise broken: still pi's, so its reader can say what is wrong.
  if (first !== undefined && PI_HEADER_START.test(first)) return "pi";
  for (const line of lines) {
    const value = parseObject(line);
    if (value === undefined) continue;
    const type = value["type"];
    if (type === "session") return "pi";
    if (typeof type === "string" && CODEX_TYPES.has(type)) return "codex";
    if (isLegacyCodex(value)) return "codex";
    if (typeof value["sessionId"] === "string" || (typeof type === "string" && CLAUDE_CODE_TYPES.has(type))) return "claude-code";
  }
  return undefined;
}

/**
 * Codex rollouts before `session_meta`: a first object with `instructions` or `git` and no
 * `type`, then `{"record_type":"state"}` lines and bare response items.
 */
function isLegacyCodex(value: Record<string, unknown>): boolean {
  if (typeof value["record_type"] === "string") return true;
  return value["type"] === undefined && typeof value["id"] === "string" && ("instructions" in value || "git" in value);
}

function parseObject(line: string): Record<string, unknown> | undefined {
  if (line.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
