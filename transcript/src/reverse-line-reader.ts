/**
 * Reads the lines of a byte range of a file from the last to the first, in fixed-size blocks,
 * so a caller can stop early without reading (or holding) the rest of the file. Lines are
 * returned as bytes and split only at `\n` (0x0A), a byte that never occurs inside a UTF-8
 * sequence, so decoding a whole line is always safe even when a block boundary cut a character.
 * One block buffer is reused for the whole range, so memory stays at one block plus the longest
 * line, however much of the file is read.
 */
import { readSync } from "node:fs";

/** Default block size: 1 MiB. */
export const DEFAULT_CHUNK_SIZE = 1 << 20;

export interface ReverseLine {
  /** Byte offset of the line's first byte in the file. */
  readonly start: number;
  /**
   * The line's bytes, without its `\n` (a `\r` before it is kept). Often a view into the
   * reader's block buffer, which the next call to `next()` overwrites: use or copy it before then.
   */
  readonly bytes: Buffer;
  /** Whether a `\n` ended the line (false only for the last line of a file with no final line break). */
  readonly terminated: boolean;
}

export class ReverseLineReader {
  readonly #fd: number;
  readonly #start: number;
  readonly #onRead: ((bytesRead: number) => void) | undefined;
  /** The one buffer every block is read into. */
  readonly #buffer: Buffer;
  /** The block in memory (a view of #buffer) and the file offset of its first byte. */
  #block: Buffer = Buffer.alloc(0);
  #blockStart: number;
  /** Bytes of the block not yet returned: [0, cursor). */
  #cursor = 0;
  /** Copies of the parts of the line being assembled that came from later blocks, last part first. */
  #pieces: Buffer[] = [];
  #nextTerminated = true;
  #done = false;
  /** Bytes read from the file so far. */
  bytesRead = 0;

  /**
   * Reads lines of the byte range [start, end) of an open file. `onRead`, when given, is called
   * after each block is read with the bytes read so far.
   */
  constructor(fd: number, start: number, end: number, chunkSize: number = DEFAULT_CHUNK_SIZE, onRead?: (bytesRead: number) => void) {
    if (!Number.isInteger(chunkSize) || chunkSize < 1) throw new RangeError(`chunkSize must be a positive integer, got ${chunkSize}`);
    this.#fd = fd;
    this.#start = start;
    this.#onRead = onRead;
    this.#blockStart = end;
    this.#buffer = Buffer.allocUnsafe(Math.max(0, Math.min(chunkSize, end - start)));
    if (end <= start) {
      this.#done = true;
      return;
    }
    this.#readPreviousBlock();
    if (this.#block[this.#cursor - 1] === 0x0a) this.#cursor -= 1;
    else this.#nextTerminated = false;
  }

  /** The previous line, or undefined when the range is exhausted. */
  next(): ReverseLine | undefined {
    if (this.#done) return undefined;
    for (;;) {
      const newline = this.#cursor > 0 ? this.#block.lastIndexOf(0x0a, this.#cursor - 1) : -1;
      if (newline >= 0) {
        const line = this.#finishLine(this.#block.subarray(newline + 1, this.#cursor), this.#blockStart + newline + 1);
        this.#cursor = newline;
        return line;
      }
      if (this.#blockStart <= this.#start) {
        this.#done = true;
        return this.#finishLine(this.#block.subarray(0, this.#cursor), this.#blockStart);
      }
      // The buffer is about to be overwritten: keep a copy of the line's part in this block.
      if (this.#cursor > 0) this.#pieces.push(Buffer.from(this.#block.subarray(0, this.#cursor)));
      this.#readPreviousBlock();
    }
  }

  #finishLine(head: Buffer, start: number): ReverseLine {
    let bytes = head;
    if (this.#pieces.length > 0) {
      this.#pieces.push(head);
      bytes = Buffer.concat(this.#pieces.reverse());
      this.#pieces = [];
    }
    const terminated = this.#nextTerminated;
    this.#nextTerminated = true;
    return { start, bytes, terminated };
  }

  #readPreviousBlock(): void {
    const size = Math.min(this.#buffer.length, this.#blockStart - this.#start);
    const position = this.#blockStart - size;
    let filled = 0;
    while (filled < size) {
      const n = readSync(this.#fd, this.#buffer, filled, size - filled, position + filled);
      if (n === 0) break;
      filled += n;
    }
    this.bytesRead += filled;
    this.#block = this.#buffer.subarray(0, filled);
    this.#blockStart = position;
    this.#cursor = this.#block.length;
    this.#onRead?.(this.bytesRead);
  }
}

/**
 * 1-based line numbers of the lines starting at the given byte offsets, by counting line
 * breaks from the start of the file. Returns the numbers and the bytes read.
 */
export function lineNumbersAt(fd: number, offsets: readonly number[], chunkSize: number = DEFAULT_CHUNK_SIZE): { lines: Map<number, number>; bytesRead: number } {
  const lines = new Map<number, number>();
  const sorted = [...new Set(offsets)].sort((a, b) => a - b);
  let bytesRead = 0;
  let newlines = 0;
  let position = 0;
  let next = 0;
  const block = Buffer.allocUnsafe(chunkSize);
  while (next < sorted.length) {
    const target = sorted[next] as number;
    const n = target > position ? readSync(fd, block, 0, Math.min(chunkSize, target - position), position) : 0;
    bytesRead += n;
    const view = block.subarray(0, n);
    for (let i = view.indexOf(0x0a); i >= 0; i = view.indexOf(0x0a, i + 1)) newlines++;
    position += n;
    if (position >= target || n === 0) {
      lines.set(target, newlines + 1);
      next++;
    }
  }
  return { lines, bytesRead };
}
