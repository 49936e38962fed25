/**
 * The recall index of one session file: every entry with text (messages, tool output,
 * compaction and branch summaries, custom messages) in a search index, whatever compaction later
 * did to the context. It is kept in a file beside the session and brought up to date by reading
 * only what was appended since; a missing, corrupt or outdated index is rebuilt.
 */
import { open, stat, type FileHandle } from "node:fs/promises";
import { CompactionError, describeError, ErrorCodes } from "@compaction/core";
import {
  migrateEntries,
  parseEntryLine,
  type RawSessionEntry,
  type SessionEntry,
  type SessionHeader,
} from "@compaction/transcript";
import { branchIds } from "./branch.js";
import { bm25Scorer } from "./bm25-scorer.js";
import { entryText, entryTimestamp } from "./entry-text.js";
import { hashRange, staleReason } from "./fingerprint.js";
import {
  INDEX_FORMAT,
  INDEX_FORMAT_VERSION,
  type IndexFile,
  indexPathFor,
  loadIndexFile,
  saveIndexFile,
  type SourceFingerprint,
  type StoredEntry,
} from "./index-file.js";
import { type FileLine, readBytes, readCompleteLines } from "./read-lines.js";
import type { RecallDocument, RecallScorer, ScoredEntry } from "./scorer.js";
import { queryWords, snippet } from "./snippet.js";

export interface OpenRecallIndexOptions {
  /** Where the index file is. Default: `<sessionPath>.recall.json`, beside the session. */
  readonly indexPath?: string;
  /** Called while the index is built or rebuilt (the whole transcript is read then). */
  readonly onProgress?: (progress: RecallProgress) => void;
  /** How entries are ranked. Default `bm25Scorer()`. One scorer instance per index. */
  readonly scorer?: RecallScorer;
  /** `search` and `get` first bring the index up to date (reading only what was appended). Default true. */
  readonly autoUpdate?: boolean;
  /** Transcript bytes indexed since the last save after which an update saves the index file. Default 0: every update that indexed something. */
  readonly saveAfterBytes?: number;
  /** Snippet length in characters. Default 200. */
  readonly snippetChars?: number;
}

/** Progress of a build or rebuild, in bytes of the transcript. */
export interface RecallProgress {
  readonly sessionPath: string;
  /** Why the index is being built: "no index yet", "the index file is corrupt ...", ... */
  readonly reason: string;
  readonly bytesRead: number;
  readonly bytesTotal: number;
}

/** What one `update()` did. */
export interface RecallUpdate {
  /** The index was built from the start of the transcript (reason says why). */
  readonly rebuilt: boolean;
  readonly reason: string | null;
  /** Entries read (every entry line, searchable or not). */
  readonly entriesRead: number;
  /** Of those, entries with searchable text. */
  readonly indexed: number;
  /** Lines that are not entries (not JSON, no type, ...), passed over as pi passes over them. */
  readonly skippedLines: number;
  /** Bytes of the transcript read. */
  readonly bytesRead: number;
  /** The index file was written. */
  readonly saved: boolean;
  /** Why writing the index file failed (the index still works in memory), or null. */
  readonly saveError: string | null;
}

/** One search result. */
export interface RecallHit {
  readonly entryId: string;
  /** ISO 8601, or "" when the entry has none. */
  readonly timestamp: string;
  /** The pi role of a message entry, else the entry type (`compaction`, `branch_summary`, `custom_message`). */
  readonly role: string;
  readonly snippet: string;
  readonly score: number;
  /**
   * The entry's text contains the query as typed (ignoring case), e.g. the whole path
   * `src/oauth-selector.ts`: such entries rank above those that only share the query's words.
   */
  readonly exact: boolean;
}

export interface RecallSearchOptions {
  /** Most results. Default 5. */
  readonly limit?: number;
  /** The branch to search: the entry it ends at. Default the transcript's last entry (pi's leaf); null: an empty branch. */
  readonly leafId?: string | null;
}

/** A whole entry, fetched by id. */
export interface RecallEntry {
  readonly entryId: string;
  readonly parentId: string | null;
  readonly timestamp: string;
  /** As in RecallHit; "" for an entry with no searchable text (a settings change, a label). */
  readonly role: string;
  /** The searchable text: what a search matched. */
  readonly text: string;
  /** 1-based line number in the transcript. */
  readonly line: number;
  /** The entry as stored (migrated to version 3 in memory for older files). */
  readonly entry: SessionEntry;
  /** Whether it is on the branch asked for (default: the current one). */
  readonly onBranch: boolean;
}

interface EntryMeta {
  readonly parentId: string | null;
  readonly offset: number;
  readonly bytes: number;
  readonly line: number;
  readonly role: string;
  readonly timestamp: string;
}

interface Header {
  readonly header: SessionHeader;
  readonly version: number;
}

const EMPTY_SOURCE: SourceFingerprint = { offset: 0, lines: 0, headerEnd: 0, headerHash: "", tailStart: 0, tailHash: "" };
const scorersInUse = new WeakSet<RecallScorer>();

/**
 * Opens the recall index of the session file at `sessionPath`: loads the index file and brings
 * it up to date, building it (with progress) when it is missing, corrupt or outdated.
 */
export async function openRecallIndex(sessionPath: string, options: OpenRecallIndexOptions = {}): Promise<RecallIndex> {
  const index = new RecallIndex(sessionPath, options);
  await index.load();
  await index.update();
  return index;
}

export class RecallIndex {
  readonly sessionPath: string;
  readonly indexPath: string;
  readonly #scorer: RecallScorer;
  readonly #options: OpenRecallIndexOptions;
  #header: Header | null = null;
  #source: SourceFingerprint = EMPTY_SOURCE;
  #entries = new Map<string, EntryMeta>();
  #leafId: string | null = null;
  /** Why the next update must start from scratch, or null. */
  #rebuildReason: string | null = "no index yet";
  #unsavedBytes = 0;
  #mustSave = false;
  #queue: Promise<unknown> = Promise.resolve();
  #lastUpdate: RecallUpdate | null = null;

  /** Prefer `openRecallIndex`, which loads and updates the index too. */
  constructor(sessionPath: string, options: OpenRecallIndexOptions = {}) {
    this.sessionPath = sessionPath;
    this.indexPath = options.indexPath ?? indexPathFor(sessionPath);
    this.#options = options;
    this.#scorer = options.scorer ?? bm25Scorer();
    if (scorersInUse.has(this.#scorer)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `The scorer '${this.#scorer.name}' already serves another recall index; it holds that index's entries.`, {
        hint: "Create one scorer per index: openRecallIndex(path, { scorer: bm25Scorer() }).",
      });
    }
    scorersInUse.add(this.#scorer);
  }

  /** The session id from the transcript's header (null before the header was read). */
  get sessionId(): string | null {
    return this.#header?.header.id ?? null;
  }
  /** The last entry in file order: the default leaf, whose branch searches cover. */
  get leafId(): string | null {
    return this.#leafId;
  }
  /** Entries known (searchable or not). */
  get entryCount(): number {
    return this.#entries.size;
  }
  /** Bytes of the transcript indexed. */
  get indexedBytes(): number {
    return this.#source.offset;
  }
  get scorerName(): string {
    return this.#scorer.name;
  }
  /** What the latest update did (for `openRecallIndex`: whether it rebuilt, and why). */
  get lastUpdate(): RecallUpdate | null {
    return this.#lastUpdate;
  }

  /** Reads the index file; a missing or unusable one makes the next update rebuild (nothing throws). */
  async load(): Promise<void> {
    await this.#exclusive(async () => {
      const loaded = await loadIndexFile(this.indexPath, this.#scorer.name);
      if (!loaded.ok) {
        this.#rebuildReason = loaded.reason;
        return;
      }
      try {
        this.#scorer.restore(loaded.file.state);
      } catch (error) {
        this.#rebuildReason = `the index file is corrupt (${(error as Error).message})`;
        return;
      }
      const file = loaded.file;
      this.#entries = new Map(file.entries.map(([id, parentId, offset, bytes, line, role, timestamp]) => [id, { parentId, offset, bytes, line, role, timestamp }]));
      this.#source = file.source;
      this.#leafId = file.leafId;
      const { id, version } = file.session;
      this.#header = file.source.headerEnd > 0 ? { header: { type: "session", id, version, timestamp: "" }, version } : null;
      this.#rebuildReason = null;
    });
  }

  /**
   * Brings the index up to date with the transcript: reads only the complete lines appended
   * since the last update (an unfinished last line is left for later) and adds their entries.
   * A transcript rewritten since (shorter, another header, another last line) is indexed again
   * from the start. Saves the index file (see `saveAfterBytes`).
   */
  update(): Promise<RecallUpdate> {
    return this.#exclusive(() => this.#update());
  }

  async #update(): Promise<RecallUpdate> {
    const size = await this.#sessionSize();
    const handle = await open(this.sessionPath, "r");
    try {
      let reason = this.#rebuildReason;
      reason ??= (await staleReason(handle, size, this.#source)) ?? null;
      if (reason !== null) this.#reset();
      const start = this.#source.offset;
      const counts = { entriesRead: 0, indexed: 0, skippedLines: 0 };
      const progress = reason === null ? undefined : this.#options.onProgress;
      progress?.({ sessionPath: this.sessionPath, reason: reason as string, bytesRead: 0, bytesTotal: size });
      let end: number;
      try {
        end = await readCompleteLines(handle, start, size, async (lines, bytesRead) => {
          await this.#consume(lines, counts);
          progress?.({ sessionPath: this.sessionPath, reason: reason as string, bytesRead: start + bytesRead, bytesTotal: size });
        });
        if (end > start) await this.#fingerprint(handle, end);
      } catch (error) {
        // Part of the lines may be in the index, the offset not moved past them: start over next time.
        this.#rebuildReason = `the previous update failed (${describeError(error)})`;
        throw error;
      }
      this.#unsavedBytes += end - start;
      if (reason !== null) this.#mustSave = true;
      this.#rebuildReason = null;
      const { saved, saveError } = await this.#saveIfDue();
      this.#lastUpdate = { rebuilt: reason !== null, reason, ...counts, bytesRead: end - start, saved, saveError };
      return this.#lastUpdate;
    } finally {
      await handle.close();
    }
  }

  async #sessionSize(): Promise<number> {
    try {
      return (await stat(this.sessionPath)).size;
    } catch (error) {
      const missing = (error as { code?: unknown }).code === "ENOENT";
      throw new CompactionError(
        missing ? ErrorCodes.TRANSCRIPT_NOT_FOUND : ErrorCodes.TRANSCRIPT_INVALID,
        `Cannot index ${this.sessionPath}: ${missing ? "the session file does not exist" : (error as Error).message}.`,
        { file: this.sessionPath, cause: error, hint: "Check the session path given to openRecallIndex." },
      );
    }
  }

  #reset(): void {
    this.#scorer.reset();
    this.#entries = new Map();
    this.#header = null;
    this.#source = EMPTY_SOURCE;
    this.#leafId = null;
    this.#unsavedBytes = 0;
  }

  /** Reads a chunk's lines: the header first, then entries (migrated to version 3 as readSession does). */
  async #consume(lines: readonly FileLine[], counts: { entriesRead: number; indexed: number; skippedLines: number }): Promise<void> {
    const raw: RawSessionEntry[] = [];
    const rawLines: FileLine[] = [];
    const lineNumbers: number[] = [];
    let lineNumber = this.#source.lines;
    for (const line of lines) {
      lineNumber += 1;
      if (line.text.trim() === "") continue;
      if (this.#header === null) {
        this.#header = this.#parseHeader(line, lineNumber);
        this.#source = { ...this.#source, headerEnd: line.offset + line.bytes + 1 };
        continue;
      }
      const entry = parseEntry(line.text, this.#header.version);
      if (entry === undefined) {
        counts.skippedLines += 1;
        continue;
      }
      raw.push(entry);
      rawLines.push(line);
      lineNumbers.push(lineNumber);
    }
    this.#source = { ...this.#source, lines: lineNumber };
    if (this.#header === null || raw.length === 0) return;

    const migrated = this.#migrate(raw, lineNumbers);
    const documents: RecallDocument[] = [];
    migrated.forEach((entry, i) => {
      const line = rawLines[i] as FileLine;
      const searchable = entryText(entry);
      const parentId = entry.parentId ? entry.parentId : null;
      const known = this.#entries.get(entry.id);
      if (known !== undefined) this.#entries.delete(entry.id); // a reused id: the later entry wins, as in pi
      this.#entries.set(entry.id, {
        parentId,
        offset: line.offset,
        bytes: line.bytes,
        line: lineNumbers[i] as number,
        role: searchable?.role ?? "",
        timestamp: entryTimestamp(entry),
      });
      this.#leafId = entry.id;
      if (searchable !== undefined) documents.push({ id: entry.id, text: searchable.text });
      else if (known !== undefined && known.role !== "") documents.push({ id: entry.id, text: "" });
    });
    counts.entriesRead += migrated.length;
    counts.indexed += documents.filter((document) => document.text !== "").length;
    if (documents.length > 0) await this.#scorer.add(documents);
  }

  /** Version 1 entries get ids from their line numbers; the first of a chunk continues the chain from the last one read. */
  #migrate(raw: readonly RawSessionEntry[], lineNumbers: readonly number[]): SessionEntry[] {
    const header = this.#header as Header;
    const migrated = migrateEntries(header.header, raw, lineNumbers);
    if (header.version >= 2 || this.#leafId === null) return migrated;
    const [first, ...rest] = migrated;
    return first === undefined ? migrated : [{ ...first, parentId: this.#leafId } as SessionEntry, ...rest];
  }

  #parseHeader(line: FileLine, lineNumber: number): Header {
    const text = line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const header = value as Partial<SessionHeader> | undefined;
    if (typeof header !== "object" || header === null || header.type !== "session" || typeof header.id !== "string") {
      throw new CompactionError(
        ErrorCodes.TRANSCRIPT_INVALID,
        `Cannot index ${this.sessionPath}: line ${lineNumber} should be the session header {"type":"session","id":...}, but it is ${JSON.stringify(text.slice(0, 80))}.`,
        { file: this.sessionPath, hint: "Pass a pi-coding-agent / OpenClaw session file (.jsonl)." },
      );
    }
    const version = typeof header.version === "number" ? header.version : 1;
    return { header: header as SessionHeader, version };
  }

  async #fingerprint(handle: FileHandle, end: number): Promise<void> {
    const tailStart = await lastLineStart(handle, end);
    const source = this.#source;
    this.#source = {
      ...source,
      offset: end,
      headerHash: source.headerHash === "" && source.headerEnd > 0 ? await hashRange(handle, 0, source.headerEnd) : source.headerHash,
      tailStart,
      tailHash: await hashRange(handle, tailStart, end),
    };
  }

  async #saveIfDue(): Promise<{ saved: boolean; saveError: string | null }> {
    const threshold = Math.max(1, this.#options.saveAfterBytes ?? 0);
    if (!this.#mustSave && this.#unsavedBytes < threshold) return { saved: false, saveError: null };
    return this.#save();
  }

  async #save(): Promise<{ saved: boolean; saveError: string | null }> {
    try {
      await saveIndexFile(this.indexPath, this.#toFile());
      this.#unsavedBytes = 0;
      this.#mustSave = false;
      return { saved: true, saveError: null };
    } catch (error) {
      return { saved: false, saveError: `could not write ${this.indexPath}: ${(error as Error).message}` };
    }
  }

  #toFile(): IndexFile {
    const entries: StoredEntry[] = [];
    for (const [id, meta] of this.#entries) entries.push([id, meta.parentId, meta.offset, meta.bytes, meta.line, meta.role, meta.timestamp]);
    return {
      format: INDEX_FORMAT,
      formatVersion: INDEX_FORMAT_VERSION,
      scorer: this.#scorer.name,
      session: { id: this.#header?.header.id ?? "", version: this.#header?.version ?? 0 },
      source: this.#source,
      leafId: this.#leafId,
      entries,
      state: this.#scorer.toJSON(),
    };
  }

  /** Writes the index file now if anything indexed is not saved yet (hosts call it on exit, after `saveAfterBytes`). */
  async close(): Promise<RecallUpdate["saveError"]> {
    return this.#exclusive(async () => (this.#unsavedBytes > 0 || this.#mustSave ? (await this.#save()).saveError : null));
  }

  /** Ids of the entries on the branch ending at `leafId` (default: the last entry). */
  branchIds(leafId?: string | null): Set<string> {
    const leaf = leafId === undefined ? this.#leafId : leafId;
    if (leaf !== null && !this.#entries.has(leaf)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `No entry "${leaf}" in ${this.sessionPath} (as indexed): cannot search its branch.`, {
        file: this.sessionPath,
        hint: "Pass the id of an entry of this session as leafId, or leave it out for the current branch.",
      });
    }
    return branchIds(leaf, (id) => this.#entries.get(id)?.parentId);
  }

  /**
   * The best entries on the branch for `query` (BM25 by default), best first, each with a
   * snippet of its text around the first matching word. Only the matched entries' lines are read
   * from the transcript (for their snippets).
   */
  async search(query: string, options: RecallSearchOptions = {}): Promise<RecallHit[]> {
    const limit = options.limit ?? 5;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `search() limit must be a whole number of at least 1, but it is ${String(limit)}.`);
    }
    if (this.#options.autoUpdate ?? true) await this.update();
    return this.#exclusive(async () => {
      const branch = this.branchIds(options.leafId);
      const filter = (id: string) => branch.has(id) && (this.#entries.get(id)?.role ?? "") !== "";
      const scored = await this.#scorer.search(query, { limit, filter });
      if (scored.length === 0) return [];
      const width = this.#options.snippetChars ?? 200;
      return this.#withSession(async (handle) => {
        const texts = new Map<string, string>();
        const textOf = async (id: string) => {
          let text = texts.get(id);
          if (text === undefined) {
            text = entryText(await this.#readEntry(handle, id, this.#entries.get(id) as EntryMeta))?.text ?? "";
            texts.set(id, text);
          }
          return text;
        };
        const ranked = await this.#exactFirst(query, scored, limit, filter, textOf);
        const hits: RecallHit[] = [];
        for (const { id, score, terms, exact } of ranked) {
          const meta = this.#entries.get(id) as EntryMeta;
          const text = await textOf(id);
          const words = exact ? [literal(query)] : terms.length > 0 ? terms : queryWords(query);
          hits.push({ entryId: id, timestamp: meta.timestamp, role: meta.role, snippet: snippet(text, words, width), score, exact });
        }
        return hits;
      });
    });
  }

  /**
   * Paths, function names, error codes and ids are what agents search for, and BM25 splits them
   * into words ("theme-selector.ts": theme, selector, ts), so an entry that mentions "theme" and
   * "selector" often can outscore the one that holds the path. Entries whose text contains the
   * query as typed (ignoring case) therefore come first, by their BM25 score; then the rest, by
   * theirs (a one-word query too: a typo-tolerant match does not contain it).
   */
  async #exactFirst(
    query: string,
    scored: readonly ScoredEntry[],
    limit: number,
    filter: (id: string) => boolean,
    textOf: (id: string) => Promise<string>,
  ): Promise<(ScoredEntry & { readonly exact: boolean })[]> {
    const wanted = literal(query).toLowerCase();
    const candidates = this.#scorer.mayContain?.(query, { filter }) ?? scored.map((hit) => hit.id);
    const exactIds = new Set<string>();
    for (const id of candidates) if (literal(await textOf(id)).toLowerCase().includes(wanted)) exactIds.add(id);
    if (exactIds.size === 0) return scored.map((hit) => ({ ...hit, exact: false }));
    // The exact entries' own scores and order: from the results when they are all there, else
    // from a search of them alone (they may be far below the first `limit`).
    const allScored = [...exactIds].every((id) => scored.some((hit) => hit.id === id));
    const exact = allScored
      ? scored.filter((hit) => exactIds.has(hit.id))
      : await this.#scorer.search(query, { limit: Math.min(limit, exactIds.size), filter: (id) => exactIds.has(id) });
    const rest = scored.filter((hit) => !exactIds.has(hit.id));
    return [...exact.map((hit) => ({ ...hit, exact: true })), ...rest.map((hit) => ({ ...hit, exact: false }))].slice(0, limit);
  }

  /** The whole entry with this id (read from the transcript), or undefined when there is none. */
  async get(entryId: string, options: { readonly leafId?: string | null } = {}): Promise<RecallEntry | undefined> {
    if (this.#options.autoUpdate ?? true) await this.update();
    return this.#exclusive(async () => {
      const meta = this.#entries.get(entryId);
      if (meta === undefined) return undefined;
      const entry = await this.#withSession((handle) => this.#readEntry(handle, entryId, meta));
      return {
        entryId,
        parentId: meta.parentId,
        timestamp: meta.timestamp,
        role: meta.role,
        text: entryText(entry)?.text ?? "",
        line: meta.line,
        entry,
        onBranch: this.branchIds(options.leafId).has(entryId),
      };
    });
  }

  async #withSession<R>(task: (handle: FileHandle) => Promise<R>): Promise<R> {
    const handle = await open(this.sessionPath, "r");
    try {
      return await task(handle);
    } finally {
      await handle.close();
    }
  }

  /** The entry at its recorded place in the transcript, migrated like the rest. */
  async #readEntry(handle: FileHandle, id: string, meta: EntryMeta): Promise<SessionEntry> {
    const bytes = await readBytes(handle, meta.offset, meta.bytes);
    const header = this.#header as Header;
    const raw = parseEntry(bytes.toString("utf8").replace(/\r$/, ""), header.version);
    const [entry] = raw === undefined ? [] : migrateEntries(header.header, [raw], [meta.line]);
    if (entry === undefined || entry.id !== id) {
      throw new CompactionError(
        ErrorCodes.TRANSCRIPT_INVALID,
        `Entry "${id}" is no longer at line ${meta.line} of ${this.sessionPath}: the transcript changed since it was indexed.`,
        { file: this.sessionPath, hint: "Call update() on the recall index (or keep autoUpdate on) to index it again." },
      );
    }
    return header.version >= 2 ? entry : ({ ...entry, parentId: meta.parentId } as SessionEntry);
  }

  /** Runs `task` after every earlier update/search/get of this index has finished. */
  #exclusive<R>(task: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

/** An entry line parsed and checked as readSession checks it (core's parseEntryLine), or undefined for a line it would skip. */
function parseEntry(text: string, version: number): RawSessionEntry | undefined {
  const verdict = parseEntryLine(text, version);
  return verdict.ok ? verdict.entry : undefined;
}

/** Offset of the last line that ends at `end` (just after its line break). */
async function lastLineStart(handle: FileHandle, end: number): Promise<number> {
  const step = 64 * 1024;
  let searchEnd = end - 1; // the line break of the last line itself
  while (searchEnd > 0) {
    const from = Math.max(0, searchEnd - step);
    const bytes = await readBytes(handle, from, searchEnd - from);
    const at = bytes.lastIndexOf(0x0a);
    if (at !== -1) return from + at + 1;
    searchEnd = from;
  }
  return 0;
}

/** The query as typed, without surrounding space and with runs of space as one. */
function literal(query: string): string {
  return query.trim().replace(/\s+/g, " ");
}
