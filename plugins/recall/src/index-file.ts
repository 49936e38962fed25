/**
 * The index file: JSON next to the session (`<session>.jsonl.recall.json` by default) holding
 * the scorer's state, every entry's place in the tree and in the file, and a fingerprint of the
 * part of the transcript already indexed, so an update reads only what was appended and a
 * transcript rewritten since is noticed.
 *
 * The file is a cache: a missing, corrupt or outdated one is rebuilt from the transcript, so it
 * is written with a temporary file and a rename (readers never see half a file) but not fsynced.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export const INDEX_FORMAT = "compaction-recall-index";
/**
 * Bumped whenever the stored shape or the indexed text of an entry changes: older files are
 * rebuilt. 2: bm25Scorer also splits words at symbols.
 */
export const INDEX_FORMAT_VERSION = 2;
/** Appended to the session file's name. */
export const INDEX_SUFFIX = ".recall.json";

/**
 * Where the indexed part of the transcript ends, and how to recognise it again. A transcript is
 * only ever appended to; when its header or its last indexed line is no longer what was
 * indexed, or it is shorter, it was rewritten and the index is rebuilt.
 */
export interface SourceFingerprint {
  /** Bytes of the transcript indexed: the offset after the last complete line read. */
  readonly offset: number;
  /** Lines read so far (1-based line numbers continue from here; version 1 ids depend on them). */
  readonly lines: number;
  /** Offset after the header line, and a hash of the bytes up to there. */
  readonly headerEnd: number;
  readonly headerHash: string;
  /** Offset of the last line read, and a hash of its bytes (up to `offset`). */
  readonly tailStart: number;
  readonly tailHash: string;
}

/** One entry of the transcript: `[id, parentId, offset, bytes, line, role, timestamp]`; role "" when not indexed. */
export type StoredEntry = [id: string, parentId: string | null, offset: number, bytes: number, line: number, role: string, timestamp: string];

export interface IndexFile {
  readonly format: typeof INDEX_FORMAT;
  readonly formatVersion: number;
  readonly scorer: string;
  readonly session: { readonly id: string; readonly version: number };
  readonly source: SourceFingerprint;
  /** The last entry in file order (the default leaf). */
  readonly leafId: string | null;
  readonly entries: StoredEntry[];
  readonly state: unknown;
}

/** The default index path for a session file: beside it, or in `indexDir` under the session file's name. */
export function indexPathFor(sessionPath: string, indexDir?: string | null): string {
  const name = `${basename(sessionPath)}${INDEX_SUFFIX}`;
  return indexDir === undefined || indexDir === null ? `${sessionPath}${INDEX_SUFFIX}` : join(indexDir, name);
}

/** What reading the index file gave: the file, or why it cannot be used. */
export type LoadedIndex = { readonly ok: true; readonly file: IndexFile } | { readonly ok: false; readonly reason: string };

/** Reads and checks the index file's shape (not whether it matches the transcript). */
export async function loadIndexFile(path: string, scorer: string): Promise<LoadedIndex> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const missing = (error as { code?: unknown }).code === "ENOENT";
    return { ok: false, reason: missing ? "no index yet" : `the index file could not be read (${(error as Error).message})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the index file is corrupt (not JSON)" };
  }
  const problem = shapeProblem(value, scorer);
  return problem === undefined ? { ok: true, file: value as IndexFile } : { ok: false, reason: problem };
}

function shapeProblem(value: unknown, scorer: string): string | undefined {
  const file = value as Partial<IndexFile> | null;
  if (typeof file !== "object" || file === null || file.format !== INDEX_FORMAT) return "the index file is corrupt (not a recall index)";
  if (file.formatVersion !== INDEX_FORMAT_VERSION) {
    return `the index file has format version ${String(file.formatVersion)}, this version reads ${INDEX_FORMAT_VERSION}`;
  }
  if (file.scorer !== scorer) return `the index was built by the '${String(file.scorer)}' scorer, not '${scorer}'`;
  const source = file.source as Partial<SourceFingerprint> | undefined;
  const numbers = ["offset", "lines", "headerEnd", "tailStart"] as const;
  if (
    typeof file.session?.id !== "string" ||
    typeof file.session.version !== "number" ||
    typeof source !== "object" ||
    source === null ||
    !numbers.every((key) => Number.isInteger(source[key]) && (source[key] as number) >= 0) ||
    typeof source.headerHash !== "string" ||
    typeof source.tailHash !== "string" ||
    !(file.leafId === null || typeof file.leafId === "string") ||
    !Array.isArray(file.entries) ||
    !file.entries.every(isStoredEntry)
  ) {
    return "the index file is corrupt (fields missing or of the wrong type)";
  }
  return undefined;
}

function isStoredEntry(value: unknown): value is StoredEntry {
  return (
    Array.isArray(value) &&
    value.length === 7 &&
    typeof value[0] === "string" &&
    (value[1] === null || typeof value[1] === "string") &&
    Number.isInteger(value[2]) &&
    Number.isInteger(value[3]) &&
    Number.isInteger(value[4]) &&
    typeof value[5] === "string" &&
    typeof value[6] === "string"
  );
}

/** Writes the index file (mode 0600) through a temporary file in the same folder and a rename. */
export async function saveIndexFile(path: string, file: IndexFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    // The session's text, as the session holds it: readable by the user alone.
    await writeFile(temporary, JSON.stringify(file), { encoding: "utf8", mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
}
