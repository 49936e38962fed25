/**
 * A session's state as a portable JSON document (`compaction context export`): what the work
 * is, what is done and open, which files and tools it touched, a summary and the last exchange.
 * Nothing in it is tied to a model, provider or message format, so `compaction context import`
 * can start a new session from it anywhere. Schema: `@compaction/core/session-state.schema.json`.
 */

/** The `format` value every session-state document carries. */
export const SESSION_STATE_FORMAT = "compaction-session-state";

/** The version of the document shape this code writes and reads. */
export const SESSION_STATE_VERSION = 1;

/** Where the state came from. */
export interface SessionStateSource {
  /** The session's id, when the transcript has one. */
  session: string | null;
  /** The transcript file, when there is one. */
  path: string | null;
  /** The transcript format: a pi session, a Claude Code or Codex transcript, or plain messages. */
  format: "pi" | "claude-code" | "codex" | "messages";
  /** The working directory the session ran in, when known. */
  cwd: string | null;
  /** For a pi session: the entry the exported branch ends at. */
  leafEntryId: string | null;
  /** How many messages the state was extracted from. */
  messages: number;
  /** Tokens of those messages, by the exporter's token counter. */
  tokens: number;
}

/** Calls of one tool among the messages. */
export interface ToolUsage {
  name: string;
  calls: number;
  /** Calls whose result reported an error. */
  failed: number;
}

/** The last user message and the assistant's reply to it. */
export interface LastExchange {
  user: string | null;
  /** The last assistant text after that user message; null when there is none yet. */
  assistant: string | null;
  /** ISO time of the reply, or of the user message when there is no reply; null when unknown. */
  timestamp: string | null;
}

/** The document `compaction context export` writes and `compaction context import` reads. */
export interface SessionState {
  format: typeof SESSION_STATE_FORMAT;
  version: typeof SESSION_STATE_VERSION;
  /** ISO time of the export. */
  exportedAt: string;
  source: SessionStateSource;
  /** What the user asked for (the opening requests, or the goal kept by earlier summaries). */
  goal: string[];
  /**
   * The newest requests after the opening ones (at most two, oldest first). Written by every
   * exporter since the handover summary; optional so documents written before it still read.
   */
  currentTask?: string[];
  /**
   * The latest plan, each item verbatim and possibly several lines: a plan or agreed structure
   * written in a message (a tree, a numbered list, a checklist), then the open work of a plan
   * file the assistant wrote. Optional like `currentTask`.
   */
  plan?: string[];
  constraints: string[];
  decisions: string[];
  /** Work in progress, next steps, and user asks not answered yet. */
  openTasks: string[];
  done: string[];
  files: { read: string[]; modified: string[] };
  toolOperations: {
    tools: ToolUsage[];
    /** Shell commands and other tool calls, oldest first. */
    commands: string[];
    /** Failed calls with their error line. */
    failed: string[];
  };
  /** Names, ids, URLs and versions worth keeping exact. */
  identifiers: string[];
  /** The extractive summary of the whole context, as markdown. */
  summary: string;
  lastExchange: LastExchange;
}
