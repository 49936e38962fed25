/**
 * Throttled progress reports for loads that read a file: at most one per `step` bytes (1 MiB),
 * always increasing, and one last report at the file's size when the load is done.
 */
import type { LoadProgress } from "./types.js";

/** Bytes between two progress reports: 1 MiB. */
export const PROGRESS_STEP = 1 << 20;

export class ProgressReporter {
  readonly #total: number;
  readonly #callback: (progress: LoadProgress) => void;
  readonly #step: number;
  /** The next report is due once this many bytes are read. */
  #due: number;
  #last = -1;

  constructor(totalBytes: number, callback: (progress: LoadProgress) => void, step: number = PROGRESS_STEP) {
    this.#total = totalBytes;
    this.#callback = callback;
    this.#step = step;
    this.#due = step;
  }

  /** Records that `bytesRead` bytes are read; reports when a step was passed since the last report. */
  update(bytesRead: number): void {
    if (bytesRead < this.#due || bytesRead >= this.#total) return;
    this.#report(bytesRead);
    this.#due = bytesRead + this.#step;
  }

  /** Reports the end (`bytesRead === totalBytes`), once. */
  done(): void {
    if (this.#last !== this.#total) this.#report(this.#total);
  }

  #report(bytesRead: number): void {
    this.#last = bytesRead;
    this.#callback({ bytesRead, totalBytes: this.#total });
  }
}

/** A reporter for `callback`, or undefined when there is none (so loads without one do no work for it). */
export function progressReporter(totalBytes: number, callback: ((progress: LoadProgress) => void) | undefined): ProgressReporter | undefined {
  return callback === undefined ? undefined : new ProgressReporter(totalBytes, callback);
}
