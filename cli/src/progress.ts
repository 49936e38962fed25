/**
 * Progress of long work (reading a large session file) on one stderr line, redrawn in place.
 * Only on a terminal: piped or redirected stderr gets nothing, so logs and tests stay clean.
 */
import type { CliIo } from "./io.js";

/** Bytes done of a total; the shape core's `onProgress` options report. */
export interface ByteProgress {
  readonly bytesRead: number;
  readonly totalBytes: number;
}

export interface ProgressLine {
  /** Pass as `onProgress` to core's readers; undefined when nothing would be shown. */
  readonly onProgress: ((progress: ByteProgress) => void) | undefined;
  /** Clears the line (call when the work ends, also on failure). */
  done(): void;
}

/** Files smaller than this load in well under a second: no progress for them. */
export const PROGRESS_MIN_BYTES = 16 * 1024 * 1024;
/** Redraws at most this often. */
const REDRAW_MS = 100;
const MIB = 1024 * 1024;

export interface ProgressLineOptions {
  /** Work on fewer bytes than this shows nothing. Default PROGRESS_MIN_BYTES (reading); slower work (indexing) passes less. */
  readonly minBytes?: number;
  readonly now?: () => number;
  /** What is done of what, after the percentage, for work that is not bytes (e.g. `200 / 452 messages`). Default: MiB. */
  readonly describe?: (done: number, total: number) => string;
}

/**
 * A progress line for `label` (e.g. "Reading session.jsonl"), or a silent one when stderr is not
 * a terminal, `COMPACTION_NO_PROGRESS` is set, or the work is below `minBytes`.
 */
export function progressLine(io: CliIo, label: string, totalBytes: number, options: ProgressLineOptions = {}): ProgressLine {
  const now = options.now ?? Date.now;
  const minBytes = options.minBytes ?? PROGRESS_MIN_BYTES;
  const silent = io.stderr.isTTY !== true || (io.env["COMPACTION_NO_PROGRESS"] ?? "") !== "" || totalBytes < minBytes;
  if (silent) return { onProgress: undefined, done: () => undefined };
  let lastDraw = 0;
  let drawn = false;
  return {
    onProgress(progress) {
      const time = now();
      if (time - lastDraw < REDRAW_MS && progress.bytesRead < progress.totalBytes) return;
      lastDraw = time;
      drawn = true;
      io.stderr.write(`\r\u001b[2K${progressText(label, progress, options.describe)}`);
    },
    done() {
      if (drawn) io.stderr.write("\r\u001b[2K");
      drawn = false;
    },
  };
}

/** `Reading s.jsonl  45% (45.0 / 100.0 MiB)`, or with `describe` what it says in the brackets. */
export function progressText(label: string, { bytesRead, totalBytes }: ByteProgress, describe?: (done: number, total: number) => string): string {
  const percent = totalBytes > 0 ? Math.min(100, Math.floor((bytesRead / totalBytes) * 100)) : 100;
  const done = describe === undefined ? `${(bytesRead / MIB).toFixed(1)} / ${(totalBytes / MIB).toFixed(1)} MiB` : describe(bytesRead, totalBytes);
  return `${label} ${String(percent).padStart(3)}% (${done})`;
}
