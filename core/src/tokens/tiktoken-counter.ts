/**
 * Exact token counts with OpenAI's tiktoken (WASM). The `tiktoken` module and each encoding
 * are loaded on first use: importing the core costs nothing, and a counter starts its encoder
 * (about 0.15 s for o200k_base) only when it first counts a non-empty text, so a process that
 * never needs a count (`compaction config`, `context history`) never pays it.
 * One encoder per encoding is shared by every counter holding it and freed when the last one is
 * disposed: half a second later, on an unref'd timer, so a counter made in between (a compactor
 * rebuilt for a changed config) takes it over instead of starting another, and a process that
 * exits right after (the CLI) does not spend time freeing it (0.05–0.2 s for o200k).
 * With `image`, a new process starts the encoder from a saved image of it (encoder-image.ts) in
 * 80–90 ms instead of building it again (0.25–0.35 s).
 */
import { createRequire } from "node:module";
import type { Tiktoken, TiktokenEncoding } from "tiktoken";
import { closest } from "fastest-levenshtein";
import { CompactionError, ErrorCodes } from "../errors.js";
import { type EncoderImageStore, startEncoderWithImage } from "./encoder-image.js";
import { DEFAULT_ENCODING, tiktokenCounterName, type TokenCounter } from "./token-counter.js";

export interface TiktokenCounterOptions {
  /** A tiktoken encoding name, e.g. `o200k_base` (default) or `cl100k_base`. */
  readonly encoding?: string;
  /**
   * Where to keep the built encoder's image, so that the next process starts it in 80–90 ms
   * instead of 0.25–0.35 s (see `startEncoderWithImage`). For hosts that start a process per
   * request, as the CLI does; a long-running host builds it once anyway. Counts are the same.
   */
  readonly image?: EncoderImageStore;
}

type TiktokenModule = typeof import("tiktoken");

interface SharedEncoder {
  readonly encoder: Tiktoken;
  counters: number;
}

const require = createRequire(import.meta.url);
const encoders = new Map<string, SharedEncoder>();
/** How long an encoder no counter holds is kept before it is freed. */
export const RETIRED_ENCODER_MS = 500;
/** Encoders no counter holds, each with its pending free. */
const retiring = new Map<string, { readonly encoder: Tiktoken; readonly free: NodeJS.Timeout }>();
let tiktokenModule: TiktokenModule | undefined;
let encodingNames: readonly string[] | undefined;

function loadTiktoken(): TiktokenModule {
  tiktokenModule ??= require("tiktoken") as TiktokenModule;
  return tiktokenModule;
}

/** Every encoding name the installed tiktoken knows, read from its registry. */
export function tiktokenEncodingNames(): readonly string[] {
  encodingNames ??= Object.freeze(Object.keys(require("tiktoken/registry.json") as object));
  return encodingNames;
}

/** The valid name a mistyped one most likely meant: a name containing it, else the closest by edit distance. */
function nearestEncoding(wanted: string, names: readonly string[]): string {
  const lower = wanted.toLowerCase().replace(/-/g, "_");
  return names.find((name) => lower !== "" && name.includes(lower)) ?? closest(lower, [...names]);
}

function checkEncoding(encoding: unknown): TiktokenEncoding {
  const names = tiktokenEncodingNames();
  if (typeof encoding === "string" && names.includes(encoding)) return encoding as TiktokenEncoding;
  const found = typeof encoding === "string" ? `"${encoding}"` : `a ${typeof encoding}`;
  const suggestion = typeof encoding === "string" ? ` Did you mean "${nearestEncoding(encoding, names)}"?` : "";
  throw new CompactionError(
    ErrorCodes.ENCODING_UNKNOWN,
    `Unknown tiktoken encoding ${found} in createTiktokenCounter({ encoding }). ` +
      `Expected one of: ${names.join(", ")}.${suggestion}`,
    { path: "/encoding", hint: `Use one of: ${names.join(", ")}, or omit it for ${DEFAULT_ENCODING}.` },
  );
}

function start(encoding: TiktokenEncoding, image: EncoderImageStore | undefined): Tiktoken {
  return image === undefined ? loadTiktoken().get_encoding(encoding) : startEncoderWithImage(encoding, image).encoder;
}

function acquire(encoding: TiktokenEncoding, image: EncoderImageStore | undefined): Tiktoken {
  let shared = encoders.get(encoding);
  if (shared === undefined) {
    const retired = retiring.get(encoding);
    retiring.delete(encoding);
    if (retired !== undefined) clearTimeout(retired.free);
    shared = { encoder: retired?.encoder ?? start(encoding, image), counters: 0 };
    encoders.set(encoding, shared);
  }
  shared.counters += 1;
  return shared.encoder;
}

function release(encoding: string): void {
  const shared = encoders.get(encoding);
  if (shared === undefined) return;
  shared.counters -= 1;
  if (shared.counters > 0) return;
  encoders.delete(encoding);
  const free = setTimeout(() => {
    retiring.delete(encoding);
    shared.encoder.free();
  }, RETIRED_ENCODER_MS);
  free.unref();
  retiring.set(encoding, { encoder: shared.encoder, free });
}

/**
 * @internal Live shared encoders and how many counters hold each (for tests and diagnostics).
 */
export function tiktokenEncoderStats(): { readonly encoding: string; readonly counters: number }[] {
  return [...encoders].map(([encoding, shared]) => ({ encoding, counters: shared.counters }));
}

/**
 * A TokenCounter backed by tiktoken. Counts with `encode_ordinary`, so text such as
 * `<|endoftext|>` in a transcript is counted as plain text instead of throwing.
 * Call `dispose()` when done; counting after that throws.
 */
export function createTiktokenCounter(options: TiktokenCounterOptions = {}): TokenCounter {
  const encoding = checkEncoding(options.encoding ?? DEFAULT_ENCODING);
  const name = tiktokenCounterName(encoding);
  let encoder: Tiktoken | undefined;
  let disposed = false;

  return {
    name,
    // No piece of any tiktoken encoding's pre-tokenizer regex crosses such a line start (line-segments.ts).
    additiveAtLineStarts: true,
    count(text: string): number {
      if (disposed) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `Token counter ${name} was used after dispose(); expected a live counter, found a disposed one.`,
          { hint: "Create a new counter with createTiktokenCounter() or stop using this one after dispose()." },
        );
      }
      if (text === "") return 0;
      encoder ??= acquire(encoding, options.image);
      return encoder.encode_ordinary(text).length;
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      if (encoder === undefined) return;
      encoder = undefined;
      release(encoding);
    },
  };
}
