#!/usr/bin/env node
// Saves the image of tiktoken's built o200k encoder in the CLI's cache folder (see
// src/prepare-encoder.ts), so the first `compaction` run starts the encoder from it. npm runs it
// after installing the CLI (`postinstall`); the repository's `prepare` runs it after its build.
// It never fails an install: without a build (in a fresh clone of the repository, npm runs it
// before `prepare` has built the CLI) it does nothing; anything else going wrong is a note on
// stderr, and the exit code is 0.
import { Readable } from "node:stream";

const note = (error) => process.stderr.write(`compaction: note: could not prepare the encoder: ${error?.message ?? error}; the first run builds it.\n`);
try {
  const { prepareEncoderImage } = await import("../dist/prepare-encoder.js");
  prepareEncoderImage({ stdout: process.stdout, stderr: process.stderr, stdin: Readable.from([]), env: process.env, cwd: process.cwd() });
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") note(error);
}
process.exitCode = 0;
