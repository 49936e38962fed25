/**
 * What an append reads from a session file under its lock: the header (only version 3 files are
 * appended to), the tail (the current leaf, recent ids, half a line a crash left) and, when a
 * parent or a compaction's kept entry must be checked, every entry's parent link.
 */
import { createReadStream } from "node:fs";
import { type FileHandle, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { requireHeader } from "./header-read.js";
import { ReverseLineReader } from "./reverse-line-reader.js";
import { CURRENT_SESSION_VERSION, type SessionHeader } from "./types.js";

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** Reads the first line of the file and parses it as a session header (`requireHeader`). */
export async function readHeaderLine(handle: FileHandle, path: string, size: number): Promise<SessionHeader> {
  // A few KiB under the caller's lock: the shared synchronous reader on the handle's descriptor.
  return requireHeader(handle.fd, path, size).header;
}

export async function requireAppendableHeader(handle: FileHandle, path: string, size: number): Promise<void> {
  const header = await readHeaderLine(handle, path, size);
  const version = header.version ?? 1;
  if (version === CURRENT_SESSION_VERSION) return;
  throw new CompactionError(
    ErrorCodes.TRANSCRIPT_INVALID,
    `Cannot append to ${path}: it is a version ${String(version)} session file, and only version ${CURRENT_SESSION_VERSION} files (entries linked by id and parentId) can be appended to.`,
    {
      file: path,
      hint:
        typeof version === "number" && version < CURRENT_SESSION_VERSION
          ? "Upgrade it first: upgradeSession(path) (keeps a .bak copy), or open it once in pi, which migrates it on open."
          : "This file was written by a newer pi; upgrade @compaction/core.",
    },
  );
}

interface Tail {
  /** Id of the last complete entry line, or null when the file holds only the header. */
  readonly leafId: string | null;
  /** Ids of the entries in the part of the file read. */
  readonly ids: readonly string[];
  readonly endsWithNewline: boolean;
  /** Bytes of an unterminated last line that does not parse (half a line a crash left), else 0. */
  readonly incompleteBytes: number;
}

/**
 * Reads the file backwards from the end to its last complete entry line (lines that do not
 * parse are passed over, as pi passes over them), without parsing the whole file. An
 * unterminated last line is the leaf only if it parses (a writer that left out the final
 * newline); otherwise it is a line a crash cut short. Ids are collected from the first block or two.
 */
export async function readTail(handle: FileHandle, size: number): Promise<Tail> {
  const reader = new ReverseLineReader(handle.fd, 0, size, CHUNK_BYTES);
  const ids: string[] = [];
  let leafId: string | undefined;
  let endsWithNewline: boolean | undefined;
  let incompleteBytes = 0;
  for (let line = reader.next(); line !== undefined; line = reader.next()) {
    const entry = parseLine(line.bytes);
    if (endsWithNewline === undefined) {
      endsWithNewline = line.terminated;
      if (!line.terminated && entry === undefined) incompleteBytes = line.bytes.length;
    }
    if (entry === "header") break;
    if (entry !== undefined) {
      ids.push(entry);
      leafId ??= entry;
    }
    if (leafId !== undefined && reader.bytesRead > CHUNK_BYTES) break;
  }
  return { leafId: leafId ?? null, ids, endsWithNewline: endsWithNewline ?? true, incompleteBytes };
}

/** The id of an entry line, "header" for the session line, undefined for blank or broken lines. */
function parseLine(bytes: Buffer): string | "header" | undefined {
  const text = bytes.toString("utf8").trim();
  if (text === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  if (fields["type"] === "session") return "header";
  return typeof fields["id"] === "string" ? fields["id"] : undefined;
}

/** Every entry's `id -> parentId`, streamed from the first `size` bytes (lines that do not parse are passed over). */
export async function readEntryLinks(path: string, size?: number): Promise<Map<string, string | null>> {
  const links = new Map<string, string | null>();
  const stream = createReadStream(path, size === undefined ? {} : { end: Math.max(size - 1, 0) });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const fields = value as Record<string, unknown> | null;
    if (typeof fields !== "object" || fields === null || typeof fields["id"] !== "string" || fields["type"] === "session") continue;
    const parent = fields["parentId"];
    links.set(fields["id"], typeof parent === "string" ? parent : null);
  }
  return links;
}

/** True when a file exists at `path`. */
export async function fileExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
