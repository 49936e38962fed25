/**
 * Errors raised while reading a session transcript. They carry the file and, for a bad line,
 * its 1-based line number and the start of what was found there.
 */
import { distance } from "fastest-levenshtein";
import { CompactionError, type CompactionErrorDetails, ErrorCodes } from "@compaction/core";

/** How many characters of a bad line are quoted in errors and `skipped` reports. */
export const FOUND_TEXT_LENGTH = 80;

export interface TranscriptErrorDetails extends CompactionErrorDetails {
  /** 1-based line number of the bad line, when there is one. */
  line?: number;
  /** The first characters of the bad line. */
  found?: string;
}

/** A transcript problem: `COMPACTION_TRANSCRIPT_CORRUPT` (a bad line) or `..._INVALID` (a bad file). */
export class TranscriptError extends CompactionError {
  readonly line?: number;
  readonly found?: string;

  constructor(
    code: typeof ErrorCodes.TRANSCRIPT_CORRUPT | typeof ErrorCodes.TRANSCRIPT_INVALID,
    message: string,
    details: TranscriptErrorDetails = {},
  ) {
    super(code, message, details);
    this.name = "TranscriptError";
    if (details.line !== undefined) this.line = details.line;
    if (details.found !== undefined) this.found = details.found;
  }
}

export function isTranscriptError(value: unknown): value is TranscriptError {
  return value instanceof TranscriptError;
}

/** The first {@link FOUND_TEXT_LENGTH} characters of a line, as quoted in reports. */
export function foundText(line: string): string {
  return line.length > FOUND_TEXT_LENGTH ? line.slice(0, FOUND_TEXT_LENGTH) : line;
}

/** `file:line`, or `line N` when there is no file name. */
export function where(file: string | undefined, line: number): string {
  return file === undefined ? `line ${line}` : `${file}:${line}`;
}

export const SKIP_HINT = "pass skipCorrupt (CLI: --skip-corrupt) to read past it; the file is not changed";

/** A line that is not a valid entry. */
export function corruptLineError(file: string | undefined, line: number, text: string, reason: string): TranscriptError {
  const found = foundText(text);
  const more = text.length > found.length ? "…" : "";
  return new TranscriptError(
    ErrorCodes.TRANSCRIPT_CORRUPT,
    `${where(file, line)}: expected a JSON object per line, found \`${found}${more}\` (${reason})`,
    { ...(file === undefined ? {} : { file }), line, found, hint: SKIP_HINT },
  );
}

/** The file does not start with a `session` header line. */
export function notASessionError(file: string | undefined, line: number | undefined, text: string | undefined, reason: string): TranscriptError {
  const name = file ?? "the input";
  const found = text === undefined ? undefined : foundText(text);
  const at = line === undefined ? "" : ` at line ${line}`;
  const what = found === undefined ? "" : `, found \`${found}${text !== undefined && text.length > found.length ? "…" : ""}\``;
  return new TranscriptError(
    ErrorCodes.TRANSCRIPT_INVALID,
    `${name} is not a session file: expected a header line {"type":"session","id":...}${at}${what} (${reason})`,
    {
      ...(file === undefined ? {} : { file }),
      ...(line === undefined ? {} : { line }),
      ...(found === undefined ? {} : { found }),
      hint: "open a pi-coding-agent / OpenClaw session .jsonl file",
    },
  );
}

/** Up to three known ids that look like the one asked for (same prefix, or a small edit away). */
export function similarIds(id: string, known: Iterable<string>): string[] {
  const prefixed: string[] = [];
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(id.length / 3)) + 1;
  for (const candidate of known) {
    if (candidate.startsWith(id) || id.startsWith(candidate)) {
      if (prefixed.length < 3) prefixed.push(candidate);
      continue;
    }
    if (prefixed.length > 0) continue;
    const d = distance(id, candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  if (prefixed.length > 0) return prefixed;
  return best === undefined ? [] : [best];
}

/** An entry id (e.g. a leaf asked for with `--at`) that is not in the file. */
export function unknownEntryError(file: string | undefined, id: string, known: Iterable<string>, lastId: string | undefined): TranscriptError {
  const similar = similarIds(id, known);
  const suggestion = similar.length > 0 ? ` Did you mean ${similar.map((s) => `\`${s}\``).join(", ")}?` : "";
  const last = lastId === undefined ? "the file has no entries" : `the last entry is \`${lastId}\``;
  return new TranscriptError(
    ErrorCodes.TRANSCRIPT_INVALID,
    `entry \`${id}\` is not in ${file ?? "the session"}: expected the id of one of its entries (${last}).${suggestion}`,
    { ...(file === undefined ? {} : { file }), hint: "pass the `id` of a line in the file (version 1 files have none: their entries are named by line, e.g. l00000042 for line 42)" },
  );
}
