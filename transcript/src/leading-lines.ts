/**
 * The first lines of a file, read forward in small steps: 4 KiB, then doubling, so a session
 * header (or a transcript's first lines) costs about its own size to read however large the
 * file is. The one reader behind session headers (`readHeader`) and format detection.
 */
import { readSync } from "node:fs";
import { cleanLine, isBlankLine } from "./parse.js";

/** One non-blank line at the start of a file, without its line break, BOM or carriage return. */
export interface LeadingLine {
  readonly text: string;
  /** 1-based line number (blank lines before it count). */
  readonly line: number;
  /** Byte offset just past the line's line break (or the end of the file). */
  readonly end: number;
  /** False for a last line with no line break: the file ends inside it. */
  readonly terminated: boolean;
}

export interface LeadingLines {
  readonly lines: readonly LeadingLine[];
  /** Bytes read from the file. */
  readonly bytesRead: number;
}

export interface ReadLeadingLinesOptions {
  /** How many non-blank lines to read. Default 1. */
  readonly count?: number;
  /** Stop after this many bytes; a line cut there is left out. Default: no limit. */
  readonly maxBytes?: number;
}

/** First read, in bytes; doubled while the lines asked for are not complete. */
const FIRST_READ = 4096;
const NEWLINE = 0x0a;

/**
 * Reads up to `count` non-blank lines from the start of the open file `fd` of `size` bytes.
 * Throws what `readSync` throws (the callers turn it into their own error).
 */
export function readLeadingLines(fd: number, size: number, options: ReadLeadingLinesOptions = {}): LeadingLines {
  const count = options.count ?? 1;
  const limit = Math.min(size, options.maxBytes ?? size);
  const lines: LeadingLine[] = [];
  let buffer = Buffer.allocUnsafe(Math.min(FIRST_READ, Math.max(limit, 1)));
  /** File offset of buffer[0]: the start of the line being looked at. */
  let base = 0;
  let filled = 0;
  let searched = 0;
  let line = 1;
  let bytesRead = 0;
  const take = (text: string, end: number, terminated: boolean) => {
    const cleaned = cleanLine(text, line === 1);
    if (!isBlankLine(cleaned)) lines.push({ text: cleaned, line, end, terminated });
  };
  while (lines.length < count) {
    const newline = buffer.subarray(0, filled).indexOf(NEWLINE, searched);
    if (newline >= 0) {
      take(buffer.toString("utf8", 0, newline), base + newline + 1, true);
      // Drop the line from the buffer and look at the next one.
      buffer.copy(buffer, 0, newline + 1, filled);
      base += newline + 1;
      filled -= newline + 1;
      searched = 0;
      line++;
      continue;
    }
    searched = filled;
    if (base + filled >= limit) break;
    if (filled === buffer.length) {
      const bigger = Buffer.allocUnsafe(Math.min(Math.max(2 * buffer.length, FIRST_READ), limit - base));
      buffer.copy(bigger, 0, 0, filled);
      buffer = bigger;
    }
    const n = readSync(fd, buffer, filled, Math.min(buffer.length - filled, limit - base - filled), base + filled);
    if (n === 0) break;
    filled += n;
    bytesRead += n;
  }
  // The file's last line has no line break; a line cut by maxBytes is incomplete and left out.
  if (lines.length < count && filled > 0 && base + filled >= size) take(buffer.toString("utf8", 0, filled), base + filled, false);
  return { lines, bytesRead };
}
