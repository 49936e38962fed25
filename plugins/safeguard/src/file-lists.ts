/**
 * The cumulative lists of files read and modified: from the tool calls of the compacted
 * messages and from the lists of earlier summaries among them.
 */
import { type MessageFacts, readSummary, readToolCall, type ToolCallInfo } from "@compaction/core";

/** Files read (and never modified) and files modified, oldest first, without repeats. */
export interface FileLists {
  readonly read: readonly string[];
  readonly modified: readonly string[];
}

/** What a tool call did to files. */
export interface FileOperation {
  readonly kind: "read" | "modify";
  readonly paths: readonly string[];
}

/**
 * The files a tool call reads or modifies, or `undefined` for a call that touches no file.
 * The classification is the core summarizer's (`readToolCall`), so summary and lists agree.
 */
export function fileOperationOf(call: ToolCallInfo): FileOperation | undefined {
  const reading = readToolCall(call);
  if ((reading.kind === "read" || reading.kind === "modify") && reading.paths.length > 0) {
    return { kind: reading.kind, paths: reading.paths };
  }
  return undefined;
}

/**
 * Files read and modified by the tool calls in `messages` (a call whose result reports an
 * error does not count), after the lists of the earlier summaries among them. A file both read
 * and modified is listed as modified only.
 */
export function collectFileLists(messages: readonly MessageFacts[]): FileLists {
  const failed = failedCalls(messages);
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const f of messages) {
    if (f.kind === "summary") {
      const lists = fileListsOfSummary(f.text);
      for (const path of lists.read) read.add(path);
      for (const path of lists.modified) modified.add(path);
      continue;
    }
    for (const call of f.toolCalls) {
      if (failed.has(call)) continue;
      const operation = fileOperationOf(call);
      if (operation === undefined) continue;
      for (const path of operation.paths) (operation.kind === "read" ? read : modified).add(path);
    }
  }
  return { read: [...read].filter((path) => !modified.has(path)), modified: [...modified] };
}

/**
 * The tool calls whose result reports an error. A result answers the nearest earlier call with
 * its id, so ids reused across turns (`call_0` every turn) pair correctly.
 */
function failedCalls(messages: readonly MessageFacts[]): Map<ToolCallInfo, MessageFacts> {
  const latest = new Map<string, ToolCallInfo>();
  const failed = new Map<ToolCallInfo, MessageFacts>();
  for (const f of messages) {
    if (f.isError) {
      for (const id of f.toolResultIds) {
        const call = latest.get(id);
        if (call !== undefined) failed.set(call, f);
      }
    }
    for (const call of f.toolCalls) latest.set(call.id, call);
  }
  return failed;
}

/** The file lists a summary states: its `## Files` section, or pi's `<read-files>`/`<modified-files>` tags. */
export function fileListsOfSummary(text: string): FileLists {
  const { slots } = readSummary(text);
  const modified = new Set(slots.filesModified);
  return { read: unique(slots.filesRead).filter((path) => !modified.has(path)), modified: [...modified] };
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
