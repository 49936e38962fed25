/**
 * Reading a session file from a byte offset, one complete line at a time. A last line without
 * its line break is not returned: a writer may still be finishing it, so it is left for the
 * next read.
 */
import type { FileHandle } from "node:fs/promises";

/** One complete line of the file. */
export interface FileLine {
  /** Byte offset of the line's first byte. */
  readonly offset: number;
  /** Length in bytes, without the line break. */
  readonly bytes: number;
  /** The text, without the line break (nor a carriage return before it). */
  readonly text: string;
}

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Reads the complete lines of `handle` between `start` and `end` (exclusive), calling `onLines`
 * for each chunk's lines (awaited, so a slow consumer holds back the reading). Returns the offset
 * just after the last complete line: where the next read starts.
 */
export async function readCompleteLines(
  handle: FileHandle,
  start: number,
  end: number,
  onLines: (lines: FileLine[], bytesRead: number) => Promise<void> | void,
): Promise<number> {
  let position = start;
  let lineStart = start;
  let pending: Buffer[] = [];
  const chunk = Buffer.alloc(Math.max(1, Math.min(CHUNK_BYTES, end - start)));
  while (position < end) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, end - position), position);
    if (bytesRead === 0) break;
    const view = chunk.subarray(0, bytesRead);
    const lines: FileLine[] = [];
    let from = 0;
    for (let at = view.indexOf(NEWLINE, 0); at !== -1; at = view.indexOf(NEWLINE, from)) {
      const piece = view.subarray(from, at);
      const whole = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      lines.push({ offset: lineStart, bytes: whole.length, text: lineText(whole) });
      lineStart += whole.length + 1;
      from = at + 1;
    }
    if (from < bytesRead) pending.push(Buffer.from(view.subarray(from)));
    position += bytesRead;
    await onLines(lines, position - start);
  }
  return lineStart;
}

function lineText(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return text.endsWith("\r") ? text.slice(0, -1) : text;
}

/** Reads `length` bytes at `offset` (fewer when the file is shorter). */
export async function readBytes(handle: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}
