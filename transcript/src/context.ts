/**
 * The model's context from a session branch, by pi-coding-agent's boundary rule: with a
 * compaction on the branch, the latest one's summary comes first, then the entries it kept
 * (from `firstKeptEntryId` up to the compaction), then everything after it.
 */
import type { PiMessage } from "@compaction/core";
import { SessionTree } from "./tree.js";
import type { CompactionEntry, SessionEntry } from "./types.js";

/** The model in use, as pi derives it (the latest model change or assistant message). */
export interface SessionModel {
  readonly provider: string;
  readonly modelId: string;
}

export interface SessionContext {
  /** The messages sent to the model, in order. */
  messages: PiMessage[];
  /** The id of the entry each message came from (the compaction's id for its summary). */
  entryIds: string[];
  /** The latest compaction on the branch, or null. */
  compaction: CompactionEntry | null;
  model: SessionModel | null;
  /** The latest thinking level on the branch ("off" when never set). */
  thinkingLevel: string;
  /** The leaf the branch ends at (null for an empty branch). */
  leafId: string | null;
  /**
   * Branch entries the context was built from, root-most first. buildContext: the whole branch.
   * loadBoundary: only the part it read (from the first kept entry, or the compaction, to the leaf).
   */
  branch: SessionEntry[];
}

export interface BuildContextOptions {
  /** The leaf whose branch to use; default the last entry; `null`: before the first entry (empty). */
  leafId?: string | null;
  /** File name for error messages. */
  file?: string;
}

/** Builds the context for a branch of `entries` (migrated, version 3). */
export function buildContext(entries: readonly SessionEntry[] | SessionTree, options: BuildContextOptions = {}): SessionContext {
  const tree = entries instanceof SessionTree ? entries : new SessionTree(entries, options.file === undefined ? {} : { file: options.file });
  const path = tree.branch(options.leafId);
  const settings = new SettingsScan();
  for (let i = path.length - 1; i >= 0 && !settings.complete; i--) settings.see(path[i] as SessionEntry);
  return { ...assembleMessages(path), ...settings.result(), leafId: path[path.length - 1]?.id ?? null, branch: path };
}

/**
 * Model and thinking level, read leaf -> root: the first of each met wins, which is the latest
 * on the branch. A model change or an assistant message sets the model.
 */
export class SettingsScan {
  #model: SessionModel | null | undefined;
  #thinkingLevel: string | undefined;

  get complete(): boolean {
    return this.#model !== undefined && this.#thinkingLevel !== undefined;
  }

  /** Whether an entry of this type (and, for messages, any role) can set a setting still unknown. */
  wants(type: string): boolean {
    if (type === "thinking_level_change") return this.#thinkingLevel === undefined;
    if (type === "model_change" || type === "message") return this.#model === undefined;
    return false;
  }

  see(entry: SessionEntry): void {
    if (entry.type === "thinking_level_change") {
      this.#thinkingLevel ??= entry.thinkingLevel as string;
    } else if (entry.type === "model_change") {
      this.#model ??= { provider: entry.provider, modelId: entry.modelId } as SessionModel;
    } else if (entry.type === "message" && entry.message.role === "assistant") {
      this.#model ??= { provider: entry.message.provider, modelId: entry.message.model } as SessionModel;
    }
  }

  result(): { model: SessionModel | null; thinkingLevel: string } {
    return { model: this.#model ?? null, thinkingLevel: this.#thinkingLevel ?? "off" };
  }
}

/**
 * Messages of a root-most-first path that holds the latest compaction and everything from its
 * first kept entry (or the whole branch); the boundary rule applied.
 */
export function assembleMessages(path: readonly SessionEntry[]): { messages: PiMessage[]; entryIds: string[]; compaction: CompactionEntry | null } {
  const messages: PiMessage[] = [];
  const entryIds: string[] = [];
  const add = (entry: SessionEntry): void => {
    const message = entryMessage(entry);
    if (message === undefined) return;
    messages.push(message);
    entryIds.push(entry.id);
  };

  let compactionIndex = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]?.type === "compaction") {
      compactionIndex = i;
      break;
    }
  }
  if (compactionIndex < 0) {
    for (const entry of path) add(entry);
    return { messages, entryIds, compaction: null };
  }

  const compaction = path[compactionIndex] as CompactionEntry;
  messages.push(compactionSummaryMessage(compaction));
  entryIds.push(compaction.id);
  let kept = false;
  for (let i = 0; i < compactionIndex; i++) {
    const entry = path[i] as SessionEntry;
    if (entry.id === compaction.firstKeptEntryId) kept = true;
    if (kept) add(entry);
  }
  for (let i = compactionIndex + 1; i < path.length; i++) add(path[i] as SessionEntry);
  return { messages, entryIds, compaction };
}

/** Milliseconds for an ISO timestamp, as pi converts it (NaN when unparseable). */
function millis(timestamp: string): number {
  return new Date(timestamp).getTime();
}

/** The summary message pi puts first in the context of a compacted branch. */
export function compactionSummaryMessage(entry: CompactionEntry): PiMessage {
  return { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: millis(entry.timestamp) };
}

/** The message an entry contributes to the context, if any (messages, custom messages, non-empty branch summaries). */
export function entryMessage(entry: SessionEntry): PiMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return {
        role: "custom",
        customType: entry.customType,
        content: entry.content,
        display: entry.display,
        details: entry.details,
        timestamp: millis(entry.timestamp),
      } as PiMessage;
    case "branch_summary":
      if (!entry.summary) return undefined;
      return { role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: millis(entry.timestamp) } as PiMessage;
    default:
      return undefined;
  }
}
