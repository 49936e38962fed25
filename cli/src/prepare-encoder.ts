/**
 * Saving the image of tiktoken's built encoder ahead of the first run (encoder-image-cache.ts),
 * so that the first `compaction` run starts the encoder from it (80–90 ms) rather than building
 * it (0.25–0.35 s, about a third of that run). The repository's `prepare` runs it after its build
 * (scripts/prepare-encoder.mjs). The published CLI has no install script (pnpm, and npm for
 * dependencies, no longer run them): its first run that counts builds the encoder and saves the
 * image (encoder-image-cache.ts), which later runs reuse.
 * It never fails an install: a note says what went wrong, and the first run builds the encoder
 * as it would have.
 */
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { DEFAULT_ENCODING, startEncoderWithImage } from "@compaction/core";
import { encoderImageDir, openEncoderImageCache } from "./encoder-image-cache.js";
import type { CliIo } from "./io.js";

/**
 * What preparing did: `off` (COMPACTION_NO_COUNT_CACHE), `not-yours` (the cache folder belongs to
 * another user: nothing written), `image` (a good image was there already), `built` (built, its
 * image saved unless a note says otherwise) or `failed` (a note says why).
 */
export type PreparedEncoder = "off" | "not-yours" | "image" | "built" | "failed";

export interface PrepareEncoderOptions {
  /** A tiktoken encoding. Default: the counter's, o200k_base. */
  readonly encoding?: string;
  /** The user it is prepared for. Default: the one running it (`process.getuid()`; none on Windows). */
  readonly uid?: number | undefined;
}

/** Makes sure the image of the encoder is saved in the CLI's cache folder. */
export function prepareEncoderImage(io: CliIo, options: PrepareEncoderOptions = {}): PreparedEncoder {
  const encoding = options.encoding ?? DEFAULT_ENCODING;
  const store = openEncoderImageCache(io);
  if (store === undefined) return "off";
  // `sudo npm install -g` runs this as root, and some sudo setups keep the user's HOME: folders
  // made there would be root's, and the user's runs could not write their cache.
  const uid = "uid" in options ? options.uid : process.getuid?.();
  if (uid !== undefined && ownerOfNearest(encoderImageDir(io)) !== uid) return "not-yours";
  try {
    const { encoder, source } = startEncoderWithImage(encoding, store);
    encoder.free();
    return source;
  } catch (error) {
    io.stderr.write(`compaction: note: could not prepare the ${encoding} encoder: ${error instanceof Error ? error.message : String(error)}; the first run builds it.\n`);
    return "failed";
  }
}

/** The owner of `path`, or of the nearest folder above it that exists. */
function ownerOfNearest(path: string): number | undefined {
  for (let at = path; ; at = dirname(at)) {
    try {
      return statSync(at).uid;
    } catch {
      if (dirname(at) === at) return undefined;
    }
  }
}
