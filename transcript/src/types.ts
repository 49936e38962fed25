/**
 * pi-coding-agent's session JSONL (version 3): a `session` header line, then one entry per line,
 * linked into a tree by `id`/`parentId`. OpenClaw stores its sessions in the same format.
 * Versions 1 (no ids) and 2 (`hookMessage` role) are migrated in memory when read.
 */
import type { CompactionEvent, PiMessage } from "@compaction/core";

export const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
  readonly type: "session";
  readonly version?: number;
  readonly id: string;
  readonly timestamp: string;
  readonly cwd?: string;
  /** Path of the session this one was branched from, when it was. */
  readonly parentSession?: string;
  readonly [key: string]: unknown;
}

interface EntryBase {
  readonly id: string;
  readonly parentId: string | null;
  /** ISO 8601. */
  readonly timestamp: string;
}

export interface MessageEntry extends EntryBase {
  readonly type: "message";
  readonly message: PiMessage;
}

/** What pi-coding-agent writes when it (or an extension) compacts. */
export interface CompactionEntry extends EntryBase {
  readonly type: "compaction";
  readonly summary: string;
  readonly firstKeptEntryId: string;
  readonly tokensBefore: number;
  /** Ours: the CompactionEvent. pi's own compactions put `{ readFiles, modifiedFiles }` here. */
  readonly details?: CompactionEvent | Record<string, unknown>;
  readonly fromHook?: boolean;
}

export interface BranchSummaryEntry extends EntryBase {
  readonly type: "branch_summary";
  readonly summary: string;
  readonly fromId?: string;
  readonly details?: unknown;
}

export interface CustomMessageEntry extends EntryBase {
  readonly type: "custom_message";
  readonly customType: string;
  readonly content: unknown;
  readonly display?: boolean;
  readonly details?: unknown;
}

/** Entries that carry no message: settings changes, labels, extension state. */
export interface OtherEntry extends EntryBase {
  readonly type: "model_change" | "thinking_level_change" | "custom" | "label" | "session_info";
  readonly [key: string]: unknown;
}

export type SessionEntry = MessageEntry | CompactionEntry | BranchSummaryEntry | CustomMessageEntry | OtherEntry;

/** An entry line as found in the file, before migration (v1 entries have no `id`/`parentId`). */
export interface RawSessionEntry {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** A line left out while reading (a corrupt line with `skipCorrupt`, or an incomplete last line). */
export interface SkippedLine {
  /** 1-based line number in the file. */
  readonly line: number;
  /** The first 80 characters of the line. */
  readonly text: string;
  /** Why it was left out. */
  readonly reason: string;
}

/** How far a load has read its file, for a progress bar. */
export interface LoadProgress {
  /** Bytes read so far (never more than `totalBytes`; increases from one report to the next). */
  readonly bytesRead: number;
  /** The file's size when the load began. */
  readonly totalBytes: number;
}
