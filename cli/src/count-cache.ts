/**
 * The token count cache: what a session's texts count, kept between runs of the CLI. Each run is
 * a new process, so without it every `compact --dry-run` or `context inspect` starts the o200k
 * encoder (0.15–0.35 s) and encodes the whole session again (about 0.3 s on the shipped one).
 * With it a run encodes only the texts it has not counted before (the turns appended since), and
 * starts no encoder when there are none.
 *
 * One file per session, `<cache>/counts/v1/<hash of the session's path>.json` (`cacheDir`),
 * holding each counter's counts keyed by a hash of the text (SHA-256, 22 base64url characters):
 * no text is stored, and a key cannot go stale, since a changed text has another key. Per session
 * rather than one store for all: a file stays the size of its session, and goes when the session
 * is no longer used; a moved session starts cold.
 * - The file is read on the first count asked for, so a command that counts nothing reads nothing.
 * - A branched session (a pi fork: its header names the session it came from, `parentSession`)
 *   with no file of its own yet starts from its parent's counts: they are read, never written,
 *   and its first run writes its own file with the counts it used and those it added.
 * - A file that cannot be read as a cache is ignored with a note on stderr and rewritten.
 * - One that cannot be written is said on stderr (on each run that cannot), and the run goes on.
 * - Writes are atomic (a crash or a second run at the same time leaves a whole file) and
 *   readable by the user alone.
 * - A file is touched on each run that reads from it; files untouched for 30 days are removed
 *   when another is written. Another version of the cache keeps its files in its own folder.
 * COMPACTION_NO_COUNT_CACHE (any value but empty or 0) turns it off.
 */
import { hash } from "node:crypto";
import { realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { TokenCountStore } from "@compaction/core";
import { cacheDir, noteCacheWriteFailure, readCacheFile, removeStaleFiles, touchCacheFile, writeCacheFile } from "./cache-dir.js";
import { type CliIo, envSwitchOn } from "./io.js";

/** Environment variable that, set to anything but "" or "0", turns the cache off. */
export const NO_COUNT_CACHE_ENV = "COMPACTION_NO_COUNT_CACHE";
/** The `format` field of a cache file. */
export const COUNT_CACHE_FORMAT = "compaction-token-counts";
export const COUNT_CACHE_VERSION = 1;
/**
 * Past this many counts in a file, a run writes only those it used (summary lines of earlier
 * runs pile up otherwise). About 1.5 MB, read in about 10 ms.
 */
export const COUNT_CACHE_MAX_ENTRIES = 50_000;
/** Cache files not written or read for this long are removed. */
export const COUNT_CACHE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** A session's kept counts, read on the first count asked for, written by `save()`. */
export interface CountCache extends TokenCountStore {
  readonly file: string;
  /**
   * Writes the counts if this run added any (or found the file unusable), else touches a file it
   * read from. Never throws: a cache that cannot be written is said on stderr and skipped.
   */
  save(): void;
}

/** The file a cache file holds, as JSON. */
interface CountCacheFile {
  readonly format: typeof COUNT_CACHE_FORMAT;
  readonly version: typeof COUNT_CACHE_VERSION;
  /** The session's path, for a person looking at the folder. */
  readonly session: string;
  /** Counter name (e.g. `tiktoken:o200k_base`) → text key → count. */
  readonly counters: Record<string, Record<string, number>>;
}

/** Where the counts of the session at `sessionPath` are kept. */
export function countCacheFile(io: CliIo, sessionPath: string): string {
  return join(cacheDir(io), "counts", `v${COUNT_CACHE_VERSION}`, `${hash("sha256", canonicalPath(sessionPath), "hex").slice(0, 32)}.json`);
}

export interface CountCacheOptions {
  /** Counts past which a run writes only those it used (default COUNT_CACHE_MAX_ENTRIES). */
  readonly maxEntries?: number;
  /**
   * The path of the session this one was branched from, asked only when it has no cache file of
   * its own yet (the CLI's is `sessionParent`, from the pi header): its counts are the start. A
   * throw is taken as no parent.
   */
  readonly parentSession?: () => string | undefined;
}

/** The cache of the session at `sessionPath`, or undefined when COMPACTION_NO_COUNT_CACHE turns it off. */
export function openCountCache(io: CliIo, sessionPath: string, options: CountCacheOptions = {}): CountCache | undefined {
  if (envSwitchOn(io.env, NO_COUNT_CACHE_ENV)) return undefined;
  const maxEntries = options.maxEntries ?? COUNT_CACHE_MAX_ENTRIES;
  const file = countCacheFile(io, sessionPath);
  let read: ReadCounts | undefined;
  const counters = (): Map<string, Map<string, number>> => (read ??= readOwnOrParent(file, io, options.parentSession)).counters;
  const used = new Map<string, Set<string>>();
  let added = 0;
  let hits = 0;
  // A miss is a `get` and then a `set` of the same text (withCountStore): its key is hashed once.
  let lastText: string | undefined;
  let lastKey = "";
  const keyOf = (text: string): string => {
    if (text !== lastText) {
      lastText = text;
      lastKey = countCacheKey(text);
    }
    return lastKey;
  };

  const use = (counter: string, key: string): void => {
    let keys = used.get(counter);
    if (keys === undefined) used.set(counter, (keys = new Set()));
    keys.add(key);
  };

  return {
    file,
    get(counter, text) {
      const key = keyOf(text);
      const count = counters().get(counter)?.get(key);
      if (count !== undefined) {
        hits += 1;
        use(counter, key);
      }
      return count;
    },
    set(counter, text, count) {
      const key = keyOf(text);
      const all = counters();
      let counts = all.get(counter);
      if (counts === undefined) all.set(counter, (counts = new Map()));
      if (!counts.has(key)) added += 1;
      counts.set(key, count);
      use(counter, key);
    },
    save() {
      if (read === undefined) return;
      const seeded = read.parent !== undefined;
      if (added === 0 && read.usable && (!seeded || hits === 0)) {
        if (hits > 0) touchCacheFile(file);
        return;
      }
      const all = read.counters;
      added = 0;
      const total = [...all.values()].reduce((sum, counts) => sum + counts.size, 0);
      // From a parent's counts, only those this session used are its own.
      const kept = total <= maxEntries && !seeded ? all : onlyUsed(all, used);
      const content: CountCacheFile = {
        format: COUNT_CACHE_FORMAT,
        version: COUNT_CACHE_VERSION,
        session: canonicalPath(sessionPath),
        counters: Object.fromEntries([...kept].map(([counter, counts]) => [counter, Object.fromEntries(counts)])),
      };
      try {
        // Readable by the user alone: the keys say which texts a session holds to one who can guess them.
        writeCacheFile(file, JSON.stringify(content));
      } catch (error) {
        noteCacheWriteFailure(io, `could not write the token count cache ${file}: ${reason(error)}; the next run counts this session again.`, NO_COUNT_CACHE_ENV);
        return;
      }
      read = { counters: kept, usable: true };
      removeStaleFiles(dirname(file), ".json", file, COUNT_CACHE_MAX_AGE_MS);
    },
  };
}

/** The key of a text in a cache file: its SHA-256, the first 22 base64url characters (132 bits). */
export function countCacheKey(text: string): string {
  return hash("sha256", text, "base64url").slice(0, 22);
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** What a cache read found: the counts, whether its file can be used, and whether there was one. */
interface ReadCounts {
  readonly counters: Map<string, Map<string, number>>;
  readonly usable: boolean;
  readonly absent?: boolean;
  /** The parent session's cache file the counts came from (the session has none of its own yet). */
  readonly parent?: string;
}

/**
 * The counts in the session's own `file`; when it has none yet, those of the session it was
 * branched from (`parentSession`), if that one's file can be used (else nothing, with no note:
 * the parent's file is not this run's to mend).
 */
function readOwnOrParent(file: string, io: CliIo, parentSession: (() => string | undefined) | undefined): ReadCounts {
  const own = readCounters(file, io);
  if (own.absent !== true || parentSession === undefined) return own;
  let parentPath: string | undefined;
  try {
    parentPath = parentSession();
  } catch {
    // No pi header to read (another transcript format, an unreadable file): no parent to start from.
  }
  if (parentPath === undefined) return own;
  const parentFile = countCacheFile(io, parentPath);
  if (parentFile === file) return own;
  const parent = readCounters(parentFile, io, { quiet: true });
  return parent.usable && parent.absent !== true ? { counters: parent.counters, usable: true, parent: parentFile } : own;
}

/**
 * The counts in `file`; none when there is no file, or when it is not a cache file (said on
 * stderr unless `quiet`, and `usable: false`, so that `save` rewrites it).
 */
function readCounters(file: string, io: CliIo, options: { readonly quiet?: boolean } = {}): ReadCounts {
  const unusable = (why: string) => {
    if (options.quiet !== true) ignored(file, io, why);
    return { counters: new Map<string, Map<string, number>>(), usable: false };
  };
  let data: Buffer | undefined;
  try {
    data = readCacheFile(file);
  } catch (error) {
    return unusable(reason(error));
  }
  // No file yet (or no folder to hold one, which saving says): nothing kept.
  if (data === undefined) return { counters: new Map(), usable: true, absent: true };
  const text = data.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return unusable(`not valid JSON (${reason(error)})`);
  }
  const problem = cacheFileProblem(parsed);
  if (problem !== undefined) return unusable(problem);
  const { counters } = parsed as CountCacheFile;
  return { counters: new Map(Object.entries(counters).map(([counter, counts]) => [counter, new Map(Object.entries(counts))])), usable: true };
}

/** What makes `value` not a cache file this version reads, or undefined. */
function cacheFileProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "expected a JSON object";
  const file = value as Partial<Record<keyof CountCacheFile, unknown>>;
  if (file.format !== COUNT_CACHE_FORMAT) return `expected "format": "${COUNT_CACHE_FORMAT}", found ${JSON.stringify(file.format) ?? "none"}`;
  if (file.version !== COUNT_CACHE_VERSION) return `expected "version": ${COUNT_CACHE_VERSION}, found ${JSON.stringify(file.version) ?? "none"}`;
  const { counters } = file;
  if (typeof counters !== "object" || counters === null || Array.isArray(counters)) return `expected "counters" to be an object`;
  for (const [counter, counts] of Object.entries(counters)) {
    if (typeof counts !== "object" || counts === null || Array.isArray(counts)) return `expected "counters"."${counter}" to be an object`;
    for (const [key, count] of Object.entries(counts)) {
      if (!Number.isSafeInteger(count) || (count as number) < 0) return `expected a count of 0 or more at "counters"."${counter}"."${key}", found ${JSON.stringify(count)}`;
    }
  }
  return undefined;
}

function ignored(file: string, io: CliIo, why: string): void {
  io.stderr.write(`compaction: note: ignored the token count cache ${file}: ${why}; it is rebuilt.\n`);
}

function onlyUsed(counters: Map<string, Map<string, number>>, used: Map<string, Set<string>>): Map<string, Map<string, number>> {
  return new Map(
    [...used].map(([counter, keys]) => {
      const counts = counters.get(counter) ?? new Map<string, number>();
      return [counter, new Map([...keys].flatMap((key) => (counts.has(key) ? [[key, counts.get(key) as number] as const] : [])))];
    }),
  );
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
