/**
 * Saving the image of tiktoken's built encoder ahead of the first run (encoder-image-cache.ts),
 * so that the first `compaction` run on a machine starts the encoder from it (80–90 ms) rather
 * than building it (0.25–0.45 s, about a third of that run). npm runs it after installing the CLI
 * (`postinstall`, bin/prepare-encoder.js), and the repository's `prepare` after its build.
 * It never fails an install: a note says what went wrong, and the first run builds the encoder
 * as it would have.
 */
import { DEFAULT_ENCODING, startEncoderWithImage } from "@compaction/core";
import { openEncoderImageCache } from "./encoder-image-cache.js";
import type { CliIo } from "./io.js";

/**
 * What preparing did: `off` (COMPACTION_NO_COUNT_CACHE), `image` (a good image was there already),
 * `built` (built, its image saved unless a note says otherwise) or `failed` (a note says why).
 */
export type PreparedEncoder = "off" | "image" | "built" | "failed";

/** Makes sure the image of the `encoding` encoder is saved in the CLI's cache folder. */
export function prepareEncoderImage(io: CliIo, encoding: string = DEFAULT_ENCODING): PreparedEncoder {
  const store = openEncoderImageCache(io);
  if (store === undefined) return "off";
  try {
    const { encoder, source } = startEncoderWithImage(encoding, store);
    encoder.free();
    return source;
  } catch (error) {
    io.stderr.write(`compaction: note: could not prepare the ${encoding} encoder: ${error instanceof Error ? error.message : String(error)}; the first run builds it.\n`);
    return "failed";
  }
}
