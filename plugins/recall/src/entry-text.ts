/**
 * What of a session entry is searchable: its text, by the rule every index shares
 * (`entrySearchText` of @compaction/transcript, which the SQLite and Postgres stores' full-text
 * search use too, so `memory_search` finds the same entries over a database as over a file), and
 * a role.
 */
import type { PiMessage } from "@compaction/core";
import { entrySearchText, messageSearchText, type SessionEntry } from "@compaction/transcript";

/** The searchable part of an entry. */
export interface EntryText {
  /**
   * The pi role of a message entry (`user`, `assistant`, `toolResult`, `bashExecution`,
   * `custom`, ...), else the entry's type (`compaction`, `branch_summary`, `custom_message`).
   */
  readonly role: string;
  readonly text: string;
}

/** The role and text to index for an entry, or undefined when it has no text worth searching. */
export function entryText(entry: SessionEntry): EntryText | undefined {
  const text = entrySearchText(entry);
  if (text === undefined) return undefined;
  return { role: entry.type === "message" ? String(entry.message.role) : entry.type, text };
}

/** A message's readable text, its tool calls as `name arguments`, and a tool result's tool name. */
export function messageText(message: PiMessage): string {
  return messageSearchText(message);
}

/** The entry's time as ISO 8601: its own `timestamp`, else its message's (milliseconds), else "". */
export function entryTimestamp(entry: SessionEntry): string {
  if (typeof entry.timestamp === "string" && entry.timestamp !== "") return entry.timestamp;
  if (entry.type === "message") {
    const millis = (entry.message as { timestamp?: unknown }).timestamp;
    if (typeof millis === "number" && Number.isFinite(millis)) return new Date(millis).toISOString();
  }
  return "";
}
