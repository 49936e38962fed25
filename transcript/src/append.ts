/**
 * The write side of a session file: appending entries and compactions under an exclusive lock.
 *
 * Every append takes the file's lock (proper-lockfile: a `<file>.lock` directory, refreshed while
 * held and taken over once stale), re-reads the current leaf from the file's tail under that lock,
 * and writes all new lines with one `write` on a descriptor opened for appending, then fsyncs.
 * Complete lines are never rewritten. If a crash left half a line at the end (an entry that was
 * never committed), that fragment is first moved, byte for byte, to `<file>.incomplete` (fsynced)
 * and cut from the session, so the file always loads and nothing is lost; a last line that is
 * whole but lacks its newline only gets the newline.
 */
import { randomUUID } from "node:crypto";
import { constants as fsConstants, createReadStream } from "node:fs";
import { type FileHandle, copyFile, open, readFile, stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import lockfile from "proper-lockfile";
import writeFileAtomic from "write-file-atomic";
import { CompactionError, type CompactionResult, describeError, ErrorCodes } from "@compaction/core";
import { parseSession } from "./parse.js";
import { readLeadingLines } from "./leading-lines.js";
import { ReverseLineReader } from "./reverse-line-reader.js";
import { notASessionError, unknownEntryError } from "./transcript-error.js";
import { CURRENT_SESSION_VERSION, type CompactionEntry, type SessionEntry, type SessionHeader } from "./types.js";

type AssignedField = "id" | "parentId" | "timestamp";

/**
 * An entry to append: any session entry, with `id`, `parentId` and `timestamp` optional. Missing
 * ones are assigned: a fresh 8-hex-digit id, the previous entry (or the leaf) as parent, now.
 */
export type NewEntry = SessionEntry extends infer E
  ? E extends SessionEntry
    ? { -readonly [K in keyof E as K extends AssignedField ? never : K]: E[K] } & { id?: string; parentId?: string | null; timestamp?: string }
    : never
  : never;

export interface SessionLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long (it crashed) is taken over.
   * Milliseconds, default 10 000; proper-lockfile raises anything below 2 000 to 2 000.
   */
  readonly staleMs?: number;
  /** How long to keep trying for the lock before failing with `COMPACTION_TRANSCRIPT_LOCKED`. Default staleMs + 5 000. */
  readonly timeoutMs?: number;
}

export interface AppendOptions {
  /**
   * Parent of the first new entry. Default: the current leaf (the last entry line in the file),
   * read under the lock. Must be the id of an entry in the file, or null for a new root.
   */
  readonly parentId?: string | null;
  readonly lock?: SessionLockOptions;
}

export interface AppendCompactionOptions {
  /** Id of the first entry kept verbatim after the summary; must be on the branch being extended. */
  readonly firstKeptEntryId: string;
  /** Context size before the compaction. Default: `result.tokensBefore`. */
  readonly tokensBefore?: number;
  readonly parentId?: string | null;
  readonly lock?: SessionLockOptions;
}

const DEFAULT_STALE_MS = 10_000;
const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * Runs `task` while holding the exclusive lock of the session file at `path` (which must exist).
 * Throws `COMPACTION_TRANSCRIPT_LOCKED` when the lock cannot be had in time, or when it was lost
 * (another process took it over as stale); `task` calls `stillHeld()` just before it writes.
 */
export async function withSessionLock<R>(
  path: string,
  task: (stillHeld: () => void) => Promise<R>,
  options: SessionLockOptions = {},
): Promise<R> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = options.timeoutMs ?? staleMs + 5_000;
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      stale: staleMs,
      retries: { retries: 100_000, factor: 1.5, minTimeout: 5, maxTimeout: 200, randomize: true, maxRetryTime: timeoutMs },
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    throw lockError(path, error, staleMs, timeoutMs);
  }
  const stillHeld = (): void => {
    if (compromised !== undefined) throw lockError(path, compromised, staleMs, timeoutMs);
  };
  try {
    const result = await task(stillHeld);
    stillHeld();
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}

function lockError(path: string, error: unknown, staleMs: number, timeoutMs: number): CompactionError {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") {
    return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `Cannot lock ${path}: the file does not exist.`, {
      file: path,
      hint: "Create the session first (createSession), or check the path.",
      cause: error,
    });
  }
  const held = code === "ELOCKED";
  return new CompactionError(
    ErrorCodes.TRANSCRIPT_LOCKED,
    held
      ? `Could not lock ${path} for writing: another process held ${path}.lock for the whole ${timeoutMs} ms waited.`
      : `Lost or could not take the write lock of ${path}: ${describeError(error)}.`,
    {
      file: path,
      hint: held
        ? `Retry once the other compaction or agent has finished. A lock left by a crashed process is taken over after ${staleMs} ms; if none is running, remove ${path}.lock.`
        : "Retry; if it keeps failing, check that the directory is writable and on a local file system.",
      cause: error,
    },
  );
}

/** A fresh entry id: 8 hex digits (as pi makes them), not in `taken`. */
export function newEntryId(taken: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 100; attempt++) {
    const id = randomUUID().slice(0, 8);
    if (!taken.has(id)) return id;
  }
  return randomUUID();
}

/**
 * Gives each new entry its missing `id`, `parentId` (the previous new entry, the first one
 * `parentId`) and `timestamp`, in pi's key order. New ids avoid `taken`, which grows with them.
 */
export function assignEntryFields(entries: readonly NewEntry[], parentId: string | null, taken: Set<string>): SessionEntry[] {
  const now = new Date().toISOString();
  const assigned: SessionEntry[] = [];
  let parent = parentId;
  entries.forEach((entry, index) => {
    checkNewEntry(entry, index);
    const { type, id, parentId: ownParent, timestamp, ...rest } = entry as NewEntry & Record<string, unknown>;
    if (id !== undefined && taken.has(id)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} has id "${id}", which the session already uses.`, {
        hint: "Leave `id` out to have a fresh one assigned.",
      });
    }
    const entryId = id ?? newEntryId(taken);
    taken.add(entryId);
    const full = { type, id: entryId, parentId: ownParent === undefined ? parent : ownParent, timestamp: timestamp ?? now, ...rest };
    assigned.push(full as unknown as SessionEntry);
    parent = entryId;
  });
  return assigned;
}

function checkNewEntry(entry: unknown, index: number): void {
  const problem = newEntryProblem(entry);
  if (problem === undefined) return;
  throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} is not a session entry: ${problem}.`, {
    hint: 'Pass objects like { type: "message", message: { role: "user", content: "...", timestamp } }.',
  });
}

function newEntryProblem(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return `found ${Array.isArray(entry) ? "an array" : String(entry)}`;
  const fields = entry as Record<string, unknown>;
  if (typeof fields["type"] !== "string" || fields["type"] === "") return "it has no `type`";
  if (fields["type"] === "session") return 'its type is "session" (createSession writes the header, once)';
  if (fields["type"] !== "message") return undefined;
  const message = fields["message"] as Record<string, unknown> | null | undefined;
  if (typeof message !== "object" || message === null || typeof message["role"] !== "string") {
    return "it is a message entry without a `message` that has a `role`";
  }
  return undefined;
}

/**
 * Appends `entries` to the version-3 session file at `path`, each one line, linked into the tree
 * (the first to the current leaf unless `parentId` is given). Returns the entries as written.
 *
 * Ids: 8 hex digits as pi makes them, checked against the batch and the ids in the last 64-128
 * KiB of the file, not the whole file (that would cost a full read per append); with an explicit
 * `parentId` or for a compaction, the whole file is scanned anyway and every id is checked. Like
 * pi, this accepts the small chance of reusing an older id: about n / 4.3e9 per new entry in a
 * file of n entries.
 */
export async function appendEntries(path: string, entries: readonly NewEntry[], options: AppendOptions = {}): Promise<SessionEntry[]> {
  return withSessionLock(path, (stillHeld) => appendUnderLock(path, entries, options.parentId, stillHeld), options.lock);
}

async function appendUnderLock(
  path: string,
  entries: readonly NewEntry[],
  parentOption: string | null | undefined,
  stillHeld: () => void,
  check?: (parentId: string | null, links: ReadonlyMap<string, string | null>) => void,
): Promise<SessionEntry[]> {
  const handle = await open(path, "a+");
  try {
    const size = (await handle.stat()).size;
    await requireAppendableHeader(handle, path, size);
    const tail = await readTail(handle, size);
    const parentId = parentOption === undefined ? tail.leafId : parentOption;
    const taken = new Set(tail.ids);
    if (check !== undefined || (parentOption !== undefined && parentOption !== null && parentOption !== tail.leafId)) {
      const links = await readEntryLinks(path, size);
      for (const id of links.keys()) taken.add(id);
      if (parentId !== null && !links.has(parentId)) throw unknownEntryError(path, parentId, links.keys(), tail.leafId ?? undefined);
      check?.(parentId, links);
    }
    const written = assignEntryFields(entries, parentId, taken);
    if (written.length === 0) return written;
    stillHeld();
    if (tail.incompleteBytes > 0) await setAsideIncompleteTail(handle, path, size, tail.incompleteBytes);
    const newline = tail.endsWithNewline || tail.incompleteBytes > 0 ? "" : "\n";
    const text = `${newline}${written.map((entry) => JSON.stringify(entry)).join("\n")}\n`;
    await writeAll(handle, Buffer.from(text, "utf8"));
    await handle.sync();
    return written;
  } finally {
    await handle.close();
  }
}

/**
 * Moves half a line a crashed writer left at the end of the file to `<file>.incomplete`
 * (appended and fsynced first, so the bytes exist somewhere at every moment), then cuts it from
 * the session file.
 */
async function setAsideIncompleteTail(handle: FileHandle, path: string, size: number, bytes: number): Promise<void> {
  const fragment = Buffer.alloc(bytes);
  await handle.read(fragment, 0, bytes, size - bytes);
  const aside = await open(`${path}.incomplete`, "a");
  try {
    await writeAll(aside, Buffer.concat([fragment, Buffer.from("\n")]));
    await aside.sync();
  } finally {
    await aside.close();
  }
  await handle.truncate(size - bytes);
}

/**
 * Appends a `compaction` entry for `result` (which must have compacted): `summary`,
 * `firstKeptEntryId`, `tokensBefore`, and the CompactionEvent as `details`, the shape pi itself
 * writes, so pi loads the file and builds the same context. `firstKeptEntryId` must be on the
 * branch the entry extends (else pi would silently keep nothing); checked under the lock.
 */
export async function appendCompaction(
  path: string,
  result: Pick<CompactionResult<unknown>, "status" | "summary" | "event" | "tokensBefore">,
  options: AppendCompactionOptions,
): Promise<CompactionEntry> {
  if (result.status !== "compacted" || result.event === null || result.summary === null) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Only a compaction that compacted can be appended, but the result's status is "${result.status}"${result.event === null ? " and it has no event" : ""}.`,
      { file: path, hint: "Append only when result.status is \"compacted\"; the file is unchanged." },
    );
  }
  const entry: NewEntry = {
    type: "compaction",
    summary: result.summary,
    firstKeptEntryId: options.firstKeptEntryId,
    tokensBefore: options.tokensBefore ?? result.tokensBefore,
    details: result.event,
  };
  const checkFirstKept = (parentId: string | null, links: ReadonlyMap<string, string | null>): void => {
    const seen = new Set<string>();
    for (let id = parentId; id !== null && !seen.has(id); id = links.get(id) ?? null) {
      if (id === options.firstKeptEntryId) return;
      seen.add(id);
    }
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Cannot append the compaction to ${path}: firstKeptEntryId "${options.firstKeptEntryId}" is not on the branch ending at ${parentId === null ? "the root" : `entry "${parentId}"`}${links.has(options.firstKeptEntryId) ? "" : " (no entry has that id)"}.`,
      { file: path, hint: "Pass the id of the first entry kept after the summary, taken from the branch that was compacted." },
    );
  };
  const [written] = await withSessionLock(
    path,
    (stillHeld) => appendUnderLock(path, [entry], options.parentId, stillHeld, checkFirstKept),
    options.lock,
  );
  return written as CompactionEntry;
}

/** Writes all of `buffer` (one `write` call unless the system writes it in parts). */
async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset, null);
    offset += bytesWritten;
  }
}

/** Reads the first line of the file and parses it as a session header. */
export async function readHeaderLine(handle: FileHandle, path: string, size: number): Promise<SessionHeader> {
  // A few KiB under the caller's lock: the shared synchronous reader on the handle's descriptor.
  const [first] = readLeadingLines(handle.fd, size).lines;
  if (first === undefined) throw notASessionError(path, undefined, undefined, "the file is empty");
  let header: unknown;
  try {
    header = JSON.parse(first.text);
  } catch (error) {
    throw notASessionError(path, first.line, first.text, `the first line is not JSON: ${describeError(error)}`);
  }
  const fields = header as Record<string, unknown> | null;
  if (typeof fields !== "object" || fields === null || fields["type"] !== "session" || typeof fields["id"] !== "string") {
    throw notASessionError(path, first.line, first.text, 'the first line is not {"type":"session","id":...}');
  }
  return fields as unknown as SessionHeader;
}

async function requireAppendableHeader(handle: FileHandle, path: string, size: number): Promise<void> {
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
async function readTail(handle: FileHandle, size: number): Promise<Tail> {
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

export interface UpgradedSession {
  readonly path: string;
  /** The version the file had. */
  readonly fromVersion: number;
  /** Where the original was copied, or null when the file was already version 3 (nothing written). */
  readonly backupPath: string | null;
}

/**
 * Rewrites a version 1 or 2 session file as version 3 (ids and parent links, `hookMessage` ->
 * `custom`), as pi does when it opens one, so it can be appended to. Under the lock; the original
 * is first copied to `<path>.bak` (or `<path>.<time>.bak` if that exists) and the new text
 * replaces it atomically. Lines that are not entries (corrupt, or an incomplete last line) are
 * kept as they are, in place. Version 1 entries get the reader's ids (`l` + line number).
 */
export async function upgradeSession(path: string, options: { readonly lock?: SessionLockOptions } = {}): Promise<UpgradedSession> {
  return withSessionLock(
    path,
    async (stillHeld) => {
      const text = await readFile(path, "utf8");
      const parsed = parseSession(text, { file: path, skipCorrupt: true });
      if (parsed.version >= CURRENT_SESSION_VERSION) return { path, fromVersion: parsed.version, backupPath: null };
      const byLine = new Map<number, SessionEntry>();
      parsed.entries.forEach((entry, index) => byLine.set(parsed.lines[index] as number, entry));
      const lines = text.split("\n");
      const endsWithNewline = text.endsWith("\n");
      if (endsWithNewline) lines.pop();
      let headerDone = false;
      const upgraded = lines.map((line, index) => {
        const entry = byLine.get(index + 1);
        if (entry !== undefined) return JSON.stringify(entry);
        if (!headerDone && line.trim() !== "") {
          headerDone = true;
          return JSON.stringify({ ...parsed.header, version: CURRENT_SESSION_VERSION });
        }
        return line;
      });
      stillHeld();
      const backupPath = await backupCopy(path);
      await writeFileAtomic(path, upgraded.join("\n") + (endsWithNewline ? "\n" : ""), { encoding: "utf8", fsync: true });
      return { path, fromVersion: parsed.version, backupPath };
    },
    options.lock,
  );
}

async function backupCopy(path: string): Promise<string> {
  const plain = `${path}.bak`;
  const target = (await fileExists(plain)) ? `${path}.${new Date().toISOString().replace(/[:.]/g, "-")}.bak` : plain;
  await copyFile(path, target, fsConstants.COPYFILE_EXCL);
  return target;
}
