/**
 * Reading a session JSONL file whole: every line is parsed and checked, older versions are
 * migrated in memory. Nothing here writes to the file.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { ErrorCodes } from "@compaction/core";
import { PROGRESS_STEP, ProgressReporter } from "./load-progress.js";
import { migrateEntries } from "./migrate.js";
import { TranscriptError, corruptLineError, foundText, notASessionError } from "./transcript-error.js";
import type { LoadProgress, RawSessionEntry, SessionEntry, SessionHeader, SkippedLine } from "./types.js";

export interface ParseSessionOptions {
  /** File name for error messages. */
  file?: string;
  /** Leave out corrupt lines (each is reported in `skipped`) instead of failing. */
  skipCorrupt?: boolean;
}

export interface ParsedSession {
  /** The header line as found (its `version` is not updated by migration). */
  header: SessionHeader;
  /** Session format version as found in the file (1 when the header has none). */
  version: number;
  /** The entries, migrated to version 3 in memory, in file order. */
  entries: SessionEntry[];
  /** 1-based line number of each entry (parallel to `entries`). */
  lines: number[];
  /** Lines left out, in file order: corrupt lines (with `skipCorrupt`) and an incomplete last line. */
  skipped: SkippedLine[];
  /** The last line had no newline and was not valid JSON: a write cut short. It is in `skipped`. */
  incompleteTail: boolean;
}

/** A line checked on its own: the entry, or why it is not one. */
export type LineVerdict =
  | { readonly ok: true; readonly entry: RawSessionEntry }
  | { readonly ok: false; readonly reason: string; /** The text was not JSON at all. */ readonly notJson: boolean };

/** The reason from a `JSON.parse` error, without engine-specific positions: "unterminated string". */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const trimmed = message
    .replace(/, ".*" is not valid JSON$/s, "")
    .replace(/ (?:in JSON )?at position \d+.*$/s, "")
    .replace(/ \(line \d+ column \d+\)$/, "");
  return trimmed.charAt(0).toLowerCase() + trimmed.slice(1);
}

function describeNonObject(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Versions 2 and later give every entry an `id`. */
export function entriesHaveIds(version: number): boolean {
  return version >= 2;
}

/** Checks a value parsed from an entry line. */
export function checkEntryValue(value: unknown, version: number): LineVerdict {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, reason: `${describeNonObject(value)}, not an object`, notJson: false };
  }
  const record = value as Record<string, unknown>;
  if (typeof record.type !== "string") return { ok: false, reason: "no string `type`", notJson: false };
  if (record.type === "session") {
    return { ok: false, reason: "a second `session` header; the header belongs on the first line only", notJson: false };
  }
  if (record.type === "message" && (typeof record.message !== "object" || record.message === null || Array.isArray(record.message))) {
    return { ok: false, reason: "a `message` entry without a `message` object", notJson: false };
  }
  if (entriesHaveIds(version)) {
    if (typeof record.id !== "string" || record.id === "") {
      return { ok: false, reason: `no string \`id\` (version ${version} entries have one)`, notJson: false };
    }
    const parentId = record.parentId;
    if (parentId !== undefined && parentId !== null && typeof parentId !== "string") {
      return { ok: false, reason: "`parentId` is neither a string nor null", notJson: false };
    }
  }
  return { ok: true, entry: record as RawSessionEntry };
}

/** Parses and checks one entry line (already without its line break). */
export function parseEntryLine(text: string, version: number): LineVerdict {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: describeJsonError(error), notJson: true };
  }
  return checkEntryValue(value, version);
}

/** True for a line holding only whitespace (pi skips those too). */
export function isBlankLine(text: string): boolean {
  return text.trim() === "";
}

/** Removes a trailing carriage return (CRLF files) and, on the first line, a byte-order mark. */
export function cleanLine(text: string, first: boolean): string {
  let out = text.endsWith("\r") ? text.slice(0, -1) : text;
  if (first && out.charCodeAt(0) === 0xfeff) out = out.slice(1);
  return out;
}

/** Parses and checks the header line; throws a `COMPACTION_TRANSCRIPT_INVALID` error. */
export function parseHeaderLine(text: string, file: string | undefined, line: number, terminated: boolean): SessionHeader {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = terminated ? describeJsonError(error) : `incomplete first line: ${describeJsonError(error)}`;
    throw notASessionError(file, line, text, reason);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw notASessionError(file, line, text, `${describeNonObject(value)}, not an object`);
  }
  const record = value as Record<string, unknown>;
  if (record.type !== "session") {
    throw notASessionError(file, line, text, `\`type\` is ${JSON.stringify(record.type) ?? "missing"}, not "session"`);
  }
  if (typeof record.id !== "string") throw notASessionError(file, line, text, "the header has no string `id`");
  if (record.version !== undefined && (typeof record.version !== "number" || !Number.isInteger(record.version) || record.version < 1)) {
    throw notASessionError(file, line, text, `\`version\` is ${JSON.stringify(record.version)}, not a positive integer`);
  }
  return record as SessionHeader;
}

/** The format version a header declares (1 when it has none, as pi assumes). */
export function headerVersion(header: SessionHeader): number {
  return header.version ?? 1;
}

/** Parses session JSONL text. Throws `TranscriptError` for a bad header or (without `skipCorrupt`) a bad line. */
export function parseSession(text: string, options: ParseSessionOptions = {}): ParsedSession {
  const { file, skipCorrupt = false } = options;
  const rawLines = text.split("\n");
  // With a final newline, split() leaves an empty string after it: that is not a line.
  const endsWithNewline = text.endsWith("\n");
  const lineCount = endsWithNewline ? rawLines.length - 1 : rawLines.length;

  let header: SessionHeader | undefined;
  let version = 1;
  const raw: RawSessionEntry[] = [];
  const lines: number[] = [];
  const skipped: SkippedLine[] = [];
  let incompleteTail = false;

  for (let i = 0; i < lineCount; i++) {
    const lineNumber = i + 1;
    const terminated = i < lineCount - 1 || endsWithNewline;
    const lineText = cleanLine(rawLines[i] as string, header === undefined);
    if (isBlankLine(lineText)) continue;
    if (header === undefined) {
      header = parseHeaderLine(lineText, file, lineNumber, terminated);
      version = headerVersion(header);
      continue;
    }
    const verdict = parseEntryLine(lineText, version);
    if (verdict.ok) {
      raw.push(verdict.entry);
      lines.push(lineNumber);
      continue;
    }
    if (!terminated && verdict.notJson) {
      incompleteTail = true;
      skipped.push({ line: lineNumber, text: foundText(lineText), reason: incompleteTailReason(verdict.reason) });
      continue;
    }
    if (!skipCorrupt) throw corruptLineError(file, lineNumber, lineText, verdict.reason);
    skipped.push({ line: lineNumber, text: foundText(lineText), reason: verdict.reason });
  }

  if (header === undefined) throw notASessionError(file, undefined, undefined, "the file is empty");
  return { header, version, entries: migrateEntries(header, raw, lines), lines, skipped, incompleteTail };
}

/** The `skipped` reason for a last line cut short. */
export function incompleteTailReason(jsonReason: string): string {
  return `incomplete last line (no line break; a write cut short): ${jsonReason}`;
}

export interface ReadSessionOptions extends Omit<ParseSessionOptions, "file"> {
  /** Called as the file is read: about once per MiB, then once with `bytesRead === totalBytes`. */
  onProgress?: (progress: LoadProgress) => void;
}

/** Reads and parses a session file (synchronously). The file is only read. */
export function readSession(path: string, options: ReadSessionOptions = {}): ParsedSession {
  const { onProgress, ...parseOptions } = options;
  return parseSession(readFileText(path, onProgress), { ...parseOptions, file: path });
}

/**
 * A whole file as UTF-8 text; with `onProgress`, read in 1 MiB blocks and reported as it goes.
 * Throws `COMPACTION_TRANSCRIPT_INVALID` when the file cannot be read.
 */
export function readFileText(path: string, onProgress?: (progress: LoadProgress) => void): string {
  try {
    return onProgress === undefined ? readFileSync(path, "utf8") : readReporting(path, onProgress);
  } catch (error) {
    throw unreadableFileError(path, error);
  }
}

function readReporting(path: string, onProgress: (progress: LoadProgress) => void): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const reporter = new ProgressReporter(size, onProgress);
    const buffer = Buffer.allocUnsafe(size);
    let filled = 0;
    while (filled < size) {
      const n = readSync(fd, buffer, filled, Math.min(PROGRESS_STEP, size - filled), filled);
      if (n === 0) break;
      filled += n;
      reporter.update(filled);
    }
    reporter.done();
    return buffer.toString("utf8", 0, filled);
  } finally {
    closeSync(fd);
  }
}

/** The file could not be opened or read. */
export function unreadableFileError(path: string, error: unknown): TranscriptError {
  const reason = error instanceof Error ? error.message : String(error);
  return new TranscriptError(ErrorCodes.TRANSCRIPT_INVALID, `could not read session file ${path}: ${reason}`, {
    file: path,
    cause: error,
    hint: "check the path and that the file is readable",
  });
}
