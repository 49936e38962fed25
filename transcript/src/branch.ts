/**
 * `compaction session branch [--at <entry-id>]`: a new session file holding the branch from the
 * root to one entry, as pi's SessionManager.createBranchedSession makes it, except that the
 * entry lines are the source's own bytes, copied, never re-serialised.
 *
 * Matching pi: the lines copied are those on the branch (the entry and its ancestors through
 * `parentId`), in root-to-entry order, not every line before the entry in the file; label
 * entries on the branch are left out and each label that applies to a copied entry (the latest
 * label change for it anywhere in the file) is written again as a new `label` entry after the
 * copied lines, keeping its timestamp. The header is new: a new id, now, the source's cwd and
 * `parentSession` = the source's path. Unlike pi (which waits for the first assistant message),
 * the file is written at once, atomically.
 */
import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { fileExists } from "./append-context.js";
import { newEntryId } from "./new-entries.js";
import { parseHeaderLine } from "./parse.js";
import { notASessionError, unknownEntryError } from "./transcript-error.js";
import { createSessionId, sessionFileName } from "./session-file.js";
import type { SessionHeader } from "./types.js";

export interface BranchSessionOptions {
  /** The entry the branch ends at: an id or a unique start of one. Default: the last entry (pi's leaf). */
  readonly atEntryId?: string;
  /** Where to write the new file. Default: beside the source, named as pi names sessions. */
  readonly newPath?: string;
  /** Id of the new session. Default: a new UUID version 7. */
  readonly id?: string;
}

export interface BranchedSession {
  readonly path: string;
  readonly header: SessionHeader;
  readonly sourcePath: string;
  /** The entry the branch ends at (resolved from a prefix if one was given). */
  readonly atEntryId: string;
  /** Ids of the entries whose lines were copied, in order. */
  readonly copiedEntryIds: readonly string[];
  /** Ids of the label entries written after them. */
  readonly labelEntryIds: readonly string[];
}

interface LineInfo {
  readonly id: string;
  readonly parentId: string | null;
  readonly type: string;
  readonly start: number;
  readonly end: number;
  readonly fields: Record<string, unknown>;
}

const NEWLINE = 0x0a;

/** Writes a new session file with the branch of `path` that ends at `options.atEntryId`. */
export async function branchSession(path: string, options: BranchSessionOptions = {}): Promise<BranchedSession> {
  const sourcePath = resolve(path);
  const bytes = await readSource(sourcePath);
  const { header, version, entries } = scanLines(bytes, sourcePath);
  if (version < 2) {
    throw new CompactionError(
      ErrorCodes.TRANSCRIPT_INVALID,
      `Cannot branch ${sourcePath}: it is a version ${version} session file, whose entries have no ids to branch at.`,
      { file: sourcePath, hint: "Upgrade it first with upgradeSession(path) (keeps a .bak copy), or open it once in pi." },
    );
  }
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  const last = entries.at(-1);
  if (last === undefined) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot branch ${sourcePath}: it has no entries, only a header.`, { file: sourcePath });
  }
  const at = options.atEntryId === undefined ? last : findEntry(byId, options.atEntryId, sourcePath, last.id);
  const branch = branchTo(at, byId);
  const copied = branch.filter((entry) => entry.type !== "label");

  const timestamp = new Date().toISOString();
  const newHeader: SessionHeader = {
    type: "session",
    version,
    id: options.id ?? createSessionId(),
    timestamp,
    ...(typeof header.cwd === "string" ? { cwd: header.cwd } : {}),
    parentSession: sourcePath,
  };
  const labels = labelEntries(entries, copied);
  const parts: Buffer[] = [Buffer.from(`${JSON.stringify(newHeader)}\n`, "utf8")];
  for (const entry of copied) parts.push(bytes.subarray(entry.start, entry.end), Buffer.from("\n"));
  for (const label of labels) parts.push(Buffer.from(`${JSON.stringify(label)}\n`, "utf8"));

  const newPath = resolve(options.newPath ?? join(dirname(sourcePath), sessionFileName(newHeader.id, timestamp)));
  if (await fileExists(newPath)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot write the branch to ${newPath}: a file already exists there.`, {
      file: newPath,
      hint: "Choose another path, or leave it out to get a new file beside the source.",
    });
  }
  await writeFileAtomic(newPath, Buffer.concat(parts), { fsync: true });
  return {
    path: newPath,
    header: newHeader,
    sourcePath,
    atEntryId: at.id,
    copiedEntryIds: copied.map((entry) => entry.id),
    labelEntryIds: labels.map((label) => label.id),
  };
}

async function readSource(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `Cannot branch ${path}: the file cannot be read (${(error as Error).message}).`, {
      file: path,
      cause: error,
    });
  }
}

/** The header and every entry line with its byte range. Lines that are not entries are passed over. */
function scanLines(bytes: Buffer, file: string): { header: SessionHeader; version: number; entries: LineInfo[] } {
  let header: SessionHeader | undefined;
  const entries: LineInfo[] = [];
  let lineNumber = 0;
  for (let start = 0; start < bytes.length; ) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    lineNumber += 1;
    const text = bytes.toString("utf8", start, end);
    if (text.trim() !== "") {
      if (header === undefined) header = parseHeaderLine(text.replace(/^\uFEFF/, "").replace(/\r$/, ""), file, lineNumber, newline !== -1);
      else {
        const entry = readEntry(text, start, end);
        if (entry !== undefined) entries.push(entry);
      }
    }
    start = end + 1;
  }
  if (header === undefined) throw notASessionError(file, undefined, undefined, "the file is empty");
  return { header, version: header.version ?? 1, entries };
}

function readEntry(text: string, start: number, end: number): LineInfo | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  if (typeof fields["id"] !== "string" || typeof fields["type"] !== "string" || fields["type"] === "session") return undefined;
  const parentId = typeof fields["parentId"] === "string" ? fields["parentId"] : null;
  return { id: fields["id"], parentId, type: fields["type"], start, end, fields };
}

/** The entry with this id, or the only one whose id starts with it; else an error naming similar ids. */
function findEntry(byId: ReadonlyMap<string, LineInfo>, query: string, file: string, lastId: string): LineInfo {
  const exact = byId.get(query);
  if (exact !== undefined) return exact;
  const prefixed = [...byId.values()].filter((entry) => entry.id.startsWith(query));
  if (prefixed.length === 1) return prefixed[0] as LineInfo;
  if (prefixed.length > 1) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Entry id prefix "${query}" matches ${prefixed.length} entries in ${file}: ${prefixed.slice(0, 5).map((e) => e.id).join(", ")}${prefixed.length > 5 ? ", …" : ""}.`,
      { file, hint: "Give more characters of the id." },
    );
  }
  throw unknownEntryError(file, query, byId.keys(), lastId);
}

/** The entries from the root to `entry`, following parentId (a cycle or a missing parent ends the walk, as in pi). */
function branchTo(entry: LineInfo, byId: ReadonlyMap<string, LineInfo>): LineInfo[] {
  const path: LineInfo[] = [];
  const seen = new Set<string>();
  for (let current: LineInfo | undefined = entry; current !== undefined && !seen.has(current.id); ) {
    seen.add(current.id);
    path.push(current);
    current = current.parentId === null ? undefined : byId.get(current.parentId);
  }
  return path.reverse();
}

interface LabelEntry {
  readonly type: "label";
  readonly id: string;
  readonly parentId: string | null;
  readonly timestamp: unknown;
  readonly targetId: string;
  readonly label: string;
}

/** pi's labels for the copied entries: the latest label change per target in file order, re-chained after the copy. */
function labelEntries(all: readonly LineInfo[], copied: readonly LineInfo[]): LabelEntry[] {
  const current = new Map<string, { label: string; timestamp: unknown }>();
  for (const entry of all) {
    if (entry.type !== "label" || typeof entry.fields["targetId"] !== "string") continue;
    const label = entry.fields["label"];
    if (typeof label === "string" && label !== "") current.set(entry.fields["targetId"], { label, timestamp: entry.fields["timestamp"] });
    else current.delete(entry.fields["targetId"]);
  }
  const taken = new Set(copied.map((entry) => entry.id));
  const written: LabelEntry[] = [];
  let parentId = copied.at(-1)?.id ?? null;
  for (const [targetId, { label, timestamp }] of current) {
    if (!taken.has(targetId)) continue;
    const id = newEntryId(taken);
    taken.add(id);
    written.push({ type: "label", id, parentId, timestamp, targetId, label });
    parentId = id;
  }
  return written;
}
