/** Recognising the indexed part of a transcript again: hashes of its header and of its last indexed line. */
import { createHash } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import type { SourceFingerprint } from "./index-file.js";
import { readBytes } from "./read-lines.js";

/** Hex SHA-256 of the bytes in [start, end) of the file. */
export async function hashRange(handle: FileHandle, start: number, end: number): Promise<string> {
  const bytes = await readBytes(handle, start, Math.max(0, end - start));
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Why the transcript no longer matches what was indexed (it was rewritten, truncated or
 * replaced), or undefined when the indexed part is still there unchanged and only appended to.
 */
export async function staleReason(handle: FileHandle, size: number, source: SourceFingerprint): Promise<string | undefined> {
  if (source.offset === 0) return undefined;
  if (size < source.offset) return `the transcript is shorter (${size} bytes) than the ${source.offset} bytes indexed: it was rewritten`;
  if (source.headerEnd > 0 && (await hashRange(handle, 0, source.headerEnd)) !== source.headerHash) {
    return "the transcript's header changed: it was rewritten or replaced";
  }
  if ((await hashRange(handle, source.tailStart, source.offset)) !== source.tailHash) {
    return "the last indexed line of the transcript changed: it was rewritten";
  }
  return undefined;
}
