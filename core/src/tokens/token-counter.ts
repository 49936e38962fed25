/** Counts tokens in a string. Implementations: tiktoken (exact) and chars/4 (estimate). */
export interface TokenCounter {
  /** e.g. `tiktoken:o200k_base` or `estimate:chars/4`. */
  readonly name: string;
  count(text: string): number;
  /**
   * True when counts add up at line starts: `count(a + b) === count(a) + count(b)` whenever `a`
   * ends with a line break that follows a character other than white space and `b` starts with a
   * character other than white space or "/" (see `forEachLineSegment`). Every tiktoken encoding
   * has it. A host's counter that sets it lets `MessageTokenCounter` count texts line by line and
   * keep each line's count, so lines it has counted (a summary fitted, completed and wrapped; a
   * line repeated across tool outputs) are not encoded again. Unset, texts are counted whole.
   */
  readonly additiveAtLineStarts?: boolean;
  /** Frees native/wasm resources. Counting after dispose throws. */
  dispose(): void;
}

/** The encoding used when none is given: GPT-4o / o-series / GPT-5. */
export const DEFAULT_ENCODING = "o200k_base";

/** The name of the tiktoken counter for `encoding` (`TokenCounter.name`), e.g. `tiktoken:o200k_base`. */
export function tiktokenCounterName(encoding: string): string {
  return `tiktoken:${encoding}`;
}

/** Fixed cost of one image, as pi-coding-agent estimates it (4,800 characters = 1,200 tokens). */
export const IMAGE_TOKENS = 1200;
