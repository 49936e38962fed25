/**
 * A session file's header, read from its first line alone: the one reader behind the boundary
 * load, the append path's check, `findMostRecentSession` and `sessionParent`, so they accept and
 * refuse the same first lines with the same errors (`parseHeaderLine`).
 */
import { type LeadingLine, readLeadingLines } from "./leading-lines.js";
import { parseHeaderLine } from "./parse.js";
import type { SessionHeader } from "./types.js";
import { notASessionError } from "./transcript-error.js";

export interface HeaderRead {
  readonly header: SessionHeader;
  /** The header's line: its number and the byte offset just past it (`end`). */
  readonly line: LeadingLine;
  /** Bytes read from the file to find it. */
  readonly bytesRead: number;
}

export interface ReadHeaderOptions {
  /** Read at most this many bytes: a header line longer than that is treated as missing. */
  readonly maxBytes?: number;
}

/**
 * Reads and checks the header line of the open file `fd` (`size` bytes, `path` for errors), or
 * undefined when the file holds no non-blank line (within `maxBytes`). Throws
 * `COMPACTION_TRANSCRIPT_INVALID` when the first line is not a pi session header, and what
 * `readSync` throws.
 */
export function readHeader(fd: number, path: string, size: number, options: ReadHeaderOptions = {}): HeaderRead | undefined {
  const { lines, bytesRead } = readLeadingLines(fd, size, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes });
  const line = lines[0];
  if (line === undefined) return undefined;
  return { header: parseHeaderLine(line.text, path, line.line, line.terminated), line, bytesRead };
}

/** `readHeader`, throwing `COMPACTION_TRANSCRIPT_INVALID` ("the file is empty") when there is no line. */
export function requireHeader(fd: number, path: string, size: number): HeaderRead {
  const read = readHeader(fd, path, size);
  if (read === undefined) throw notASessionError(path, undefined, undefined, "the file is empty");
  return read;
}
