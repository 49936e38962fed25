/**
 * The short text that replaces a pruned tool output: which tool ran with which arguments,
 * whether it failed, and how large the output was, e.g.
 * `[pruned tool output: bash(command="npm test") — failed, 12,345 tokens]`.
 */
import { formatCount } from "@compaction/core";

/** Start of every marker. */
export const PRUNED_MARKER_PREFIX = "[pruned tool output: ";

/** Longest shown argument value, in characters (longer ones keep their start and end around `…`). */
const MAX_VALUE_CHARS = 60;
/** Most arguments shown per call (more end in `, …`). */
const MAX_ARGUMENTS = 4;
/** Most calls listed for one message (more end in `, …`). */
const MAX_CALLS = 4;

/** One call whose output is pruned: its name and, when the issuing call was found, its arguments. */
export interface PrunedCall {
  /** Tool name; empty when unknown. */
  readonly name: string;
  /** The call's arguments as the host stored them; `undefined` when the issuing call was not found. */
  readonly arguments?: unknown;
}

export interface PrunedOutput {
  /** The calls this message answers (several for an Anthropic message with several tool_result blocks). */
  readonly calls: readonly PrunedCall[];
  /** The tool reported a failure. */
  readonly failed: boolean;
  /** Images the output carried. */
  readonly imageCount: number;
  /** Tokens of the message before pruning. */
  readonly tokens: number;
}

/** A whole marker line (the token figure at the end tells a marker from output that quotes the prefix). */
const MARKER_LINE = /^\[pruned tool output: .* — (?:failed, )?(?:\d+ images?, )?[\d,]+ tokens\]$/;

/** The marker for a pruned output: one line, arguments shortened. */
export function formatPrunedMarker(output: PrunedOutput): string {
  const shown = output.calls.slice(0, MAX_CALLS).map(describeCall);
  if (output.calls.length > MAX_CALLS) shown.push("…");
  const calls = shown.length === 0 ? "unknown tool" : shown.join(", ");
  const notes: string[] = [];
  if (output.failed) notes.push("failed");
  if (output.imageCount > 0) notes.push(`${output.imageCount} image${output.imageCount === 1 ? "" : "s"}`);
  notes.push(`${formatCount(output.tokens)} tokens`);
  return `${PRUNED_MARKER_PREFIX}${oneLine(calls)} — ${notes.join(", ")}]`;
}

/**
 * True when the text holds a marker line, i.e. the output was pruned already (by this plugin,
 * in this run or an earlier one) and must not be pruned again.
 */
export function isPrunedMarker(text: string): boolean {
  if (!text.includes(PRUNED_MARKER_PREFIX)) return false;
  return text.split("\n").some((line) => MARKER_LINE.test(line));
}

/** `bash(command="npm test")`, `read(path="a.ts", offset=10)`, or just the name when the arguments are unknown. */
export function describeCall(call: PrunedCall): string {
  const name = call.name === "" ? "unknown tool" : call.name;
  if (call.arguments === undefined) return name;
  return `${name}(${formatArguments(call.arguments)})`;
}

function formatArguments(args: unknown): string {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return formatValue(args);
  const entries = Object.entries(args as Record<string, unknown>).filter(([, value]) => value !== undefined);
  const shown = entries.slice(0, MAX_ARGUMENTS).map(([key, value]) => `${clip(key)}=${formatValue(value)}`);
  if (entries.length > MAX_ARGUMENTS) shown.push("…");
  return shown.join(", ");
}

/** Strings quoted (JSON escapes keep them on one line), other values as JSON; each at most MAX_VALUE_CHARS. */
function formatValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clip(value));
  return clip(JSON.stringify(value) ?? String(value));
}

/** Keeps the start and the end (a command's last step, a path's file name) around an ellipsis. */
function clip(text: string): string {
  if (text.length <= MAX_VALUE_CHARS) return text;
  const head = Math.ceil((MAX_VALUE_CHARS - 1) / 2);
  const tail = MAX_VALUE_CHARS - 1 - head;
  return `${text.slice(0, head)}…${text.slice(text.length - tail)}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ");
}
