/**
 * The token count cache: what a session's texts count, kept between runs of the CLI. Each run is
 * a new process, so without it every `compact --dry-run` or `context inspect` starts the o200k
 * encoder (about 0.3 s) and encodes the whole session again (another 0.3 s on the shipped one).
 * With it a run encodes only the texts it has not counted before (the turns appended since), and
 * starts no encoder when there are none.
 *
 * One file per session, `<cache>/counts/<hash of the session's path>.json` (`cacheDir`), holding
 * each counter's counts keyed by a hash of the text (SHA-256, 128 bits): no text is stored, and
 * a key cannot go stale, since a changed text has another key. A file that cannot be read as a
 * cache is ignored (said once on stderr) and replaced; one that cannot be written is said once
 * and skipped. Writes are atomic, so a crash or a second run at the same time leaves a whole file.
 * Files untouched for 30 days are removed when another is written. COMPACTION_NO_COUNT_CACHE=1
 * turns it off.
 */
import { hash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, unlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { TokenCountStore } from "@compaction/core";
import writeFileAtomic from "write-file-atomic";
import { cacheDir } from "./cache-dir.js";
import type { CliIo } from "./io.js";

/** Environment variable that, set to anything but "" or "0", turns the cache off. */
export const NO_COUNT_CACHE_ENV = "COMPACTION_NO_COUNT_CACHE";
/** The `format` field of a cache file. */
export const COUNT_CACHE_FORMAT = "compaction-token-counts";
export const COUNT_CACHE_VERSION = 1;
/** Past this many counts in a file, a run writes only those it used. */
export const COUNT_CACHE_MAX_ENTRIES = 200_000;
/** Cache files not written for this long are removed. */
export const COUNT_CACHE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

/** A session's kept counts, read when opened, written by `save()`. */
export interface CountCache extends TokenCountStore {
  readonly file: string;
  /** Writes the counts if this run added any. Never throws: a cache that cannot be written is said on stderr and skipped. */
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

/** Whether COMPACTION_NO_COUNT_CACHE turns the cache off. */
export function countCacheDisabled(env: CliIo["env"]): boolean {
  const value = env[NO_COUNT_CACHE_ENV];
  return value !== undefined && value !== "" && value !== "0";
}

/** Where the counts of the session at `sessionPath` are kept. */
export function countCacheFile(io: CliIo, sessionPath: string): string {
  return join(cacheDir(io), "counts", `${hash("sha256", canonicalPath(sessionPath), "hex").slice(0, 32)}.json`);
}

/** The cache of the session at `sessionPath`, or undefined when COMPACTION_NO_COUNT_CACHE turns it off. */
export function openCountCache(io: CliIo, sessionPath: string, limits: { readonly maxEntries?: number } = {}): CountCache | undefined {
  const maxEntries = limits.maxEntries ?? COUNT_CACHE_MAX_ENTRIES;
  if (countCacheDisabled(io.env)) return undefined;
  const file = countCacheFile(io, sessionPath);
  const counters = readCounters(file, io);
  const used = new Map<string, Set<string>>();
  let added = 0;

  const countsOf = (counter: string): Map<string, number> => {
    let counts = counters.get(counter);
    if (counts === undefined) counters.set(counter, (counts = new Map()));
    return counts;
  };
  const use = (counter: string, key: string): void => {
    let keys = used.get(counter);
    if (keys === undefined) used.set(counter, (keys = new Set()));
    keys.add(key);
  };

  return {
    file,
    get(counter, text) {
      const key = textKey(text);
      const count = counters.get(counter)?.get(key);
      if (count !== undefined) use(counter, key);
      return count;
    },
    set(counter, text, count) {
      const key = textKey(text);
      const counts = countsOf(counter);
      if (!counts.has(key)) added += 1;
      counts.set(key, count);
      use(counter, key);
    },
    save() {
      if (added === 0) return;
      added = 0;
      const total = [...counters.values()].reduce((sum, counts) => sum + counts.size, 0);
      const kept = total <= maxEntries ? counters : onlyUsed(counters, used);
      const content: CountCacheFile = {
        format: COUNT_CACHE_FORMAT,
        version: COUNT_CACHE_VERSION,
        session: canonicalPath(sessionPath),
        counters: Object.fromEntries([...kept].map(([counter, counts]) => [counter, Object.fromEntries(counts)])),
      };
      try {
        // Readable by the user alone: the keys say which texts a session holds to one who can guess them.
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        writeFileAtomic.sync(file, JSON.stringify(content), { mode: 0o600 });
      } catch (error) {
        io.stderr.write(
          `compaction: note: could not write the token count cache ${file}: ${reason(error)}; the next run counts this session again.\n` +
            `hint: set ${NO_COUNT_CACHE_ENV}=1 to stop using the cache.\n`,
        );
        return;
      }
      removeStale(dirname(file), file);
    },
  };
}

/** The key of a text: SHA-256, 128 bits, base64url (22 characters). */
function textKey(text: string): string {
  return hash("sha256", text, "base64url").slice(0, 22);
}

function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The counts in `file`; none when there is no file, or when it is not a cache file (said on stderr). */
function readCounters(file: string, io: CliIo): Map<string, Map<string, number>> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    // No file yet (or no folder to hold one, which saving says): nothing kept.
    const { code } = error as NodeJS.ErrnoException;
    if (code !== "ENOENT" && code !== "ENOTDIR") ignored(file, io, reason(error));
    return new Map();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    ignored(file, io, `not valid JSON (${reason(error)})`);
    return new Map();
  }
  const problem = cacheFileProblem(parsed);
  if (problem !== undefined) {
    ignored(file, io, problem);
    return new Map();
  }
  const { counters } = parsed as CountCacheFile;
  return new Map(Object.entries(counters).map(([counter, counts]) => [counter, new Map(Object.entries(counts))]));
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

/** Removes the cache files in `dir` other than `keep` not written for COUNT_CACHE_MAX_AGE_MS; best effort. */
function removeStale(dir: string, keep: string): void {
  const oldest = Date.now() - COUNT_CACHE_MAX_AGE_MS;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (!name.endsWith(".json") || path === keep) continue;
    try {
      if (statSync(path).mtimeMs < oldest) unlinkSync(path);
    } catch {
      // Removed by another run, or not ours to remove: leave it.
    }
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
