/**
 * Where the CLI keeps what it can rebuild: `$XDG_CACHE_HOME/compaction`, else
 * `~/.cache/compaction`. A relative XDG_CACHE_HOME is ignored, as the XDG spec says, and an empty
 * HOME is the user's home directory, so that nothing lands in the folder the command runs in.
 */
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { CliIo } from "./io.js";

export function cacheDir(io: CliIo): string {
  const xdg = io.env["XDG_CACHE_HOME"];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "compaction");
  const home = io.env["HOME"];
  return join(home !== undefined && isAbsolute(home) ? home : homedir(), ".cache", "compaction");
}
