/**
 * Splitting a serialised conversation into chunks that each fit a model's input, so a history
 * too large for one request is summarised chunk by chunk, each chunk updating the summary so far.
 */
import type { TokenCounter } from "@compaction/core";
import { clipMiddle } from "./serialize-conversation.js";

/** Tokens counted for the blank line between two entries. */
const SEPARATOR_TOKENS = 1;

/**
 * Packs transcript entries, in order, into chunks of at most `roomTokens` (counted with
 * `counter`), joined by blank lines. An entry larger than `roomTokens` is clipped in the middle
 * to fit and becomes a chunk of its own. No entry is split across chunks or left out.
 */
export function chunkConversation(entries: readonly string[], roomTokens: number, counter: TokenCounter): string[] {
  const room = Math.max(1, Math.floor(roomTokens));
  const chunks: string[] = [];
  let current: string[] = [];
  let used = 0;
  for (const original of entries) {
    let entry = original;
    let tokens = counter.count(entry);
    if (tokens > room) {
      entry = clipToTokens(entry, room, counter);
      tokens = counter.count(entry);
    }
    const cost = current.length > 0 ? tokens + SEPARATOR_TOKENS : tokens;
    if (current.length > 0 && used + cost > room) {
      chunks.push(current.join("\n\n"));
      current = [];
      used = 0;
    }
    used += current.length > 0 ? tokens + SEPARATOR_TOKENS : tokens;
    current.push(entry);
  }
  if (current.length > 0) chunks.push(current.join("\n\n"));
  return chunks;
}

/** `text` with its middle clipped until it counts at most `maxTokens` (its first line kept when possible). */
export function clipToTokens(text: string, maxTokens: number, counter: TokenCounter): string {
  if (counter.count(text) <= maxTokens) return text;
  let low = 0;
  let high = text.length;
  // The longest clip that fits: clipMiddle's length grows with maxChars, so binary search works.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (counter.count(clipMiddle(text, mid)) <= maxTokens) low = mid;
    else high = mid - 1;
  }
  const clipped = clipMiddle(text, low);
  return counter.count(clipped) <= maxTokens ? clipped : "";
}
