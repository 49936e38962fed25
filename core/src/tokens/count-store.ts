/**
 * Counts kept outside the process. A host that starts a new process for each command (the CLI)
 * keeps a session's counts between them, so the texts it counted before are not encoded again and,
 * when every text a run counts is kept, the encoder (0.15–0.35 s for o200k) never starts.
 */
import type { TokenCounter } from "./token-counter.js";

/** Where a host keeps counts: by the counter's name and the text. How it keys a text (a hash) is its own. */
export interface TokenCountStore {
  /** The count `counter` (a TokenCounter's `name`) gave `text`, if kept. */
  get(counter: string, text: string): number | undefined;
  /** Keeps the count `counter` gave `text`. */
  set(counter: string, text: string, count: number): void;
}

/**
 * `counter`, reading counts from `store` first and keeping in it what it counts. Same name and
 * line additivity as `counter`; `dispose()` disposes `counter`, after which counting throws as `counter` does.
 */
export function withCountStore(counter: TokenCounter, store: TokenCountStore): TokenCounter {
  const { name } = counter;
  let disposed = false;
  return {
    name,
    ...(counter.additiveAtLineStarts === undefined ? {} : { additiveAtLineStarts: counter.additiveAtLineStarts }),
    count(text: string): number {
      // The counter's own answer for these: 0, or its error when disposed.
      if (text === "" || disposed) return counter.count(text);
      const kept = store.get(name, text);
      if (kept !== undefined) return kept;
      const tokens = counter.count(text);
      store.set(name, text, tokens);
      return tokens;
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      counter.dispose();
    },
  };
}
