/**
 * The session a pi session file was branched from: its header's `parentSession` (pi's fork and
 * `branchSession` write it), read from the file's first line alone, resolved against the file's
 * folder when relative.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { readHeader } from "./header-read.js";

/** Bytes read at most for the header line. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * The path of the session `path` was branched from, or undefined when its header names none.
 * Throws `COMPACTION_TRANSCRIPT_INVALID` when the first line is not a pi session header, and what
 * reading the file throws.
 */
export function sessionParent(path: string): string | undefined {
  const fd = openSync(path, "r");
  let read;
  try {
    read = readHeader(fd, path, fstatSync(fd).size, { maxBytes: MAX_HEADER_BYTES });
  } finally {
    closeSync(fd);
  }
  if (read === undefined) return undefined;
  const parent = read.header.parentSession;
  return typeof parent === "string" && parent !== "" ? resolve(dirname(path), parent) : undefined;
}
