/**
 * Where the CLI keeps what it can rebuild: `$XDG_CACHE_HOME/compaction`, else
 * `~/.cache/compaction`. A relative XDG_CACHE_HOME is ignored, as the XDG spec says, and an empty
 * HOME is the user's home directory, so that nothing lands in the folder the command runs in.
 * And how a file there is read, written, touched and removed when stale: the rules the count
 * cache, the encoder images and the OpenClaw snapshots share.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, utimesSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import writeFileAtomic from "write-file-atomic";
import type { CliIo } from "./io.js";

/** Runs (by their io) already given the hint to turn the cache off. */
const hinted = new WeakSet<CliIo>();

/**
 * Says on stderr that a file in the cache could not be written (`note`: what, why and what the
 * next run does), and once per run the hint to turn the cache off with `offSwitch`: when the
 * cache folder cannot be written, the encoder image and the count cache both fail, with one cause.
 */
export function noteCacheWriteFailure(io: CliIo, note: string, offSwitch: string): void {
  io.stderr.write(`compaction: note: ${note}\n`);
  if (hinted.has(io)) return;
  hinted.add(io);
  io.stderr.write(`hint: set ${offSwitch}=1 to stop using the cache.\n`);
}

export function cacheDir(io: CliIo): string {
  const xdg = io.env["XDG_CACHE_HOME"];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "compaction");
  const home = io.env["HOME"];
  return join(home !== undefined && isAbsolute(home) ? home : homedir(), ".cache", "compaction");
}

/**
 * Removes the files in `dir` named `*<extension>` other than `keep`, and the temporary files of
 * writes cut off (`*<extension>.<suffix>`, write-file-atomic's), not written or read for
 * `maxAgeMs`; best effort.
 */
export function removeStaleFiles(dir: string, extension: string, keep: string, maxAgeMs: number): void {
  const oldest = Date.now() - maxAgeMs;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (path === keep || !(name.endsWith(extension) || name.includes(`${extension}.`))) continue;
    try {
      if (statSync(path).mtimeMs < oldest) unlinkSync(path);
    } catch {
      // Removed by another run, or not ours to remove: leave it.
    }
  }
}

/**
 * A cache file's bytes, or undefined when there is none yet (or no folder to hold one, which
 * writing says). Any other failure is thrown.
 */
export function readCacheFile(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/**
 * Writes a cache file atomically (a crash or a second run at the same time leaves a whole file),
 * readable by the user alone: 0600, in a folder made 0700. No fsync: a file cut off by a power
 * loss is read as unusable and rewritten. Throws what went wrong.
 */
export function writeCacheFile(file: string, data: string | Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic.sync(file, typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength), { mode: 0o600, fsync: false });
}

/** Marks `file` as used now, so that it is not removed as stale; best effort (a read-only cache still serves). */
export function touchCacheFile(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    // Not ours to touch, or gone: the next write makes it again.
  }
}
