/**
 * Where the CLI keeps the image of tiktoken's built encoder (the core's `startEncoderWithImage`):
 * `<cache>/encoders/v1/<encoding>-tiktoken-<version>-<build>.image` (`cacheDir`). Each CLI run is
 * a new process, and building the o200k encoder costs it 0.25–0.35 s; started from the image it
 * costs 80–90 ms, with the same counts. 28 MB for o200k.
 * - What goes wrong with an image (unreadable, spoiled, from another build, not writable) is said
 *   on stderr as a note, and the run builds the encoder as it would without it. One that cannot be
 *   written is said on each run that cannot, with a hint to turn the cache off.
 * - Written atomically, readable by the user alone (0600, in a 0700 folder).
 * - An image is touched by each run that reads it; images untouched for 30 days (an older
 *   tiktoken's) are removed when another is written.
 * COMPACTION_NO_COUNT_CACHE, which turns the count cache off, turns this off too.
 */
import { join } from "node:path";
import type { EncoderImageStore } from "@compaction/core";
import { cacheDir, noteCacheWriteFailure, readCacheFile, removeStaleFiles, touchCacheFile, writeCacheFile } from "./cache-dir.js";
import { NO_COUNT_CACHE_ENV } from "./count-cache.js";
import { type CliIo, envSwitchOn } from "./io.js";

export const ENCODER_IMAGE_CACHE_VERSION = 1;
/** Images not read or written for this long are removed when another is written. */
export const ENCODER_IMAGE_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
const SUFFIX = ".image";

/** The folder of the encoder images. */
export function encoderImageDir(io: CliIo): string {
  return join(cacheDir(io), "encoders", `v${ENCODER_IMAGE_CACHE_VERSION}`);
}

/** The store of encoder images, or undefined when COMPACTION_NO_COUNT_CACHE turns it off. */
export function openEncoderImageCache(io: CliIo): EncoderImageStore | undefined {
  if (envSwitchOn(io.env, NO_COUNT_CACHE_ENV)) return undefined;
  const dir = encoderImageDir(io);
  const fileOf = (key: string): string => join(dir, `${key}${SUFFIX}`);
  return {
    read(key) {
      const file = fileOf(key);
      const image = readCacheFile(file);
      if (image !== undefined) touchCacheFile(file);
      return image;
    },
    write(key, image) {
      const file = fileOf(key);
      try {
        writeCacheFile(file, image);
      } catch (error) {
        noteCacheWriteFailure(
          io,
          `could not save the built encoder to ${file}: ${error instanceof Error ? error.message : String(error)}; the next run builds it again.`,
          NO_COUNT_CACHE_ENV,
        );
        return;
      }
      removeStaleFiles(dir, SUFFIX, file, ENCODER_IMAGE_MAX_AGE_MS);
    },
    where: fileOf,
    onNote: (message) => io.stderr.write(`compaction: note: ${message}\n`),
  };
}
