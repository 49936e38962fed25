/** The failed tool calls of the compacted messages, one line each: `tool(arguments): error line`. */
import { isHighSurrogate, type MessageFacts, type ToolCallInfo, readSummary } from "@compaction/core";

/** Characters of a call's arguments shown in its line. */
const ARGS_CHARS = 100;
/** Characters of the error line shown. */
const ERROR_CHARS = 200;
/** Characters of a failed call's output searched for the line that names the error. */
const ERROR_SEARCH_CHARS = 4000;
const ERROR_LINE = /\b(?:error|failed|failure|exception|traceback|denied|not found|no such|cannot|can't|refused|timed out|fatal)\b/i;
const PATH_FIELDS = ["path", "file_path", "filePath", "file", "notebook_path"] as const;
const COMMAND_FIELDS = ["command", "cmd"] as const;

/**
 * One line per failed tool call in `messages`, oldest first, after the failed calls listed by
 * the earlier summaries among them (`### Failed` items). Repeats are dropped.
 */
export function collectFailedCalls(messages: readonly MessageFacts[]): string[] {
  const latest = new Map<string, ToolCallInfo>();
  const lines = new Set<string>();
  for (const f of messages) {
    if (f.kind === "summary") {
      for (const item of readSummary(f.text).slots.failed) lines.add(item);
      continue;
    }
    // A result answers the nearest earlier call with its id (ids may repeat across turns).
    if (f.isError) for (const id of f.toolResultIds) lines.add(failedCallLine(latest.get(id), f));
    for (const call of f.toolCalls) latest.set(call.id, call);
  }
  return [...lines];
}

/** `name(arguments): error line` for a failed call (or `tool: error line` when the call is unknown). */
export function failedCallLine(call: ToolCallInfo | undefined, result: MessageFacts): string {
  const name = result.toolName ?? call?.name ?? "tool";
  const error = clip(errorLine(result.text), ERROR_CHARS);
  if (call === undefined) return `${name}: ${error}`;
  return `${name}(${clip(argumentsSummary(call.arguments), ARGS_CHARS)}): ${error}`;
}

/** The call's path or command when it has one, else its arguments as compact JSON. */
function argumentsSummary(value: unknown): string {
  let args: unknown = value;
  if (typeof value === "string") {
    try {
      args = JSON.parse(value) as unknown;
    } catch {
      return collapse(value);
    }
  }
  if (typeof args !== "object" || args === null) return "";
  const record = args as Record<string, unknown>;
  for (const field of [...PATH_FIELDS, ...COMMAND_FIELDS]) {
    const found = record[field];
    if (typeof found === "string" && found.trim().length > 0) return collapse(found);
  }
  return collapse(JSON.stringify(args) ?? "");
}

/** The first line that names an error near the start of the output, else the first non-blank line. */
function errorLine(output: string): string {
  const lines = output.slice(0, ERROR_SEARCH_CHARS).split("\n");
  const named = lines.find((line) => ERROR_LINE.test(line));
  const first = named ?? lines.find((line) => line.trim().length > 0);
  return first === undefined ? "(no output)" : collapse(first);
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  let kept = text.slice(0, maxChars - 1);
  if (isHighSurrogate(kept.charCodeAt(kept.length - 1))) kept = kept.slice(0, -1);
  return `${kept.trimEnd()}…`;
}
