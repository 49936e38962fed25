/**
 * The session a pi session file was branched from: its header's `parentSession` (pi's fork and
 * `branchSession` write it), read from the file's first line alone, resolved against the file's
 * folder when relative.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { readLeadingLines } from "./leading-lines.js";
import { parseHeaderLine } from "./parse.js";

/** Bytes read at most for the header line. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The path of the session `path` was branched from, or undefined when its header names none.
 * Throws `COMPACTION_TRANSCRIPT_INVALID` when the first line is not a pi session header, and what
 * reading the file throws.
 */
export function sessionParent(path: string): string | undefined {
  const fd = openSync(path, "r");
  let first;
  try {
    first = readLeadingLines(fd, fstatSync(fd).size, { maxBytes: MAX_HEADER_BYTES }).lines[0];
  } finally {
    closeSync(fd);
  }
  if (first === undefined) return undefined;
  const parent = parseHeaderLine(first.text, path, first.line, first.terminated).parentSession;
  return typeof parent === "string" && parent !== "" ? resolve(dirname(path), parent) : undefined;
}
