/** Where the CLI keeps what it can rebuild: `$XDG_CACHE_HOME/compaction`, else `~/.cache/compaction`. */
import { homedir } from "node:os";
import { join } from "node:path";
import type { CliIo } from "./io.js";

export function cacheDir(io: CliIo): string {
  const xdg = io.env["XDG_CACHE_HOME"];
  return join(xdg !== undefined && xdg !== "" ? xdg : join(io.env["HOME"] ?? homedir(), ".cache"), "compaction");
}
