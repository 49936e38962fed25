/** Counts tokens in a string. Implementations: tiktoken (exact) and chars/4 (estimate). */
export interface TokenCounter {
  /** e.g. `tiktoken:o200k_base` or `estimate:chars/4`. */
  readonly name: string;
  count(text: string): number;
  /** Frees native/wasm resources. Counting after dispose throws. */
  dispose(): void;
}

/** Fixed cost of one image, as pi-coding-agent estimates it (4,800 characters = 1,200 tokens). */
export const IMAGE_TOKENS = 1200;
