#!/usr/bin/env node
// Saves the image of tiktoken's built o200k encoder in the CLI's cache folder (see
// cli/src/prepare-encoder.ts), so that the first `compaction` run in this repository starts the
// encoder from it. The repository's `prepare` (scripts/prepare.mjs) runs it after its build.
// The published CLI has no install script (pnpm, and npm for dependencies' scripts, no longer
// run them): there the first run that counts builds the image and saves it.
// It never fails an install: without a build of the CLI it does nothing; anything else going
// wrong is a note on stderr, and the exit code is 0.
import { Readable } from "node:stream";

const note = (error) => process.stderr.write(`compaction: note: could not prepare the encoder: ${error?.message ?? error}; the first run builds it.\n`);
try {
  const { prepareEncoderImage } = await import("../cli/dist/prepare-encoder.js");
  prepareEncoderImage({ stdout: process.stdout, stderr: process.stderr, stdin: Readable.from([]), env: process.env, cwd: process.cwd() });
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") note(error);
}
process.exitCode = 0;
