/**
 * Where the CLI keeps what it can rebuild: `$XDG_CACHE_HOME/compaction`, else
 * `~/.cache/compaction`. A relative XDG_CACHE_HOME is ignored, as the XDG spec says, and an empty
 * HOME is the user's home directory, so that nothing lands in the folder the command runs in.
 */
import { readdirSync, statSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { CliIo } from "./io.js";

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
