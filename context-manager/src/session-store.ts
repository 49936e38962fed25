/**
 * A context kept in a pi session file (version 3): messages are appended as `message` entries,
 * a compaction as pi's `compaction` entry, after which the context is reloaded by the boundary
 * rule, so the manager's messages are what pi builds from the file.
 *
 * Opening reads the whole file once: the context could come from `loadBoundary` alone, but the
 * compaction count (for degradation warnings and `maxAutoCompactions`) and the session's
 * auto-compaction setting lie anywhere on the branch, before the boundary too. After that, each
 * write records the file's size; when the size differs from the last one recorded, another
 * process wrote (e.g. `compaction autocompact off`) and the branch facts are read again.
 */
import { statSync } from "node:fs";
import { type CompactInput, CompactionError, type CompactionResult, type Compactor, type ContextAnchor, ErrorCodes, type PiMessage } from "@compaction/core";
import {
  appendEntries,
  appendPiCompaction,
  buildContext,
  compactionAnchor,
  compactPiBranch,
  CURRENT_SESSION_VERSION,
  loadBoundary,
  type NewEntry,
  type PiCompaction,
  type PiCompactionPlan,
  readSession,
  sessionAutoCompact,
  type SessionEntry,
  withAppended,
} from "@compaction/transcript";
import type { AppendedSince, ContextStore } from "./context-store.js";

interface BranchFacts {
  readonly compactions: number;
  readonly autoCompact: boolean | undefined;
}

export class SessionStore<T> implements ContextStore<T> {
  readonly path: string;
  readonly synchronous = false;
  #messages: T[];
  /** pi's entry for each result `compact` returned, for `commit` (a background compaction may be planned beside a foreground one). */
  readonly #planned = new WeakMap<CompactionResult<T>, PiCompactionPlan>();
  #entryIds: string[];
  #facts: BranchFacts;
  #knownSize: number;
  #anchor: ContextAnchor | undefined;

  private constructor(path: string, messages: T[], entryIds: string[], facts: BranchFacts, anchor: ContextAnchor | undefined) {
    this.path = path;
    this.#messages = messages;
    this.#entryIds = entryIds;
    this.#facts = facts;
    this.#knownSize = fileSize(path);
    this.#anchor = anchor;
  }

  /** Opens a version 3 session file; older versions must be upgraded first (`upgradeSession`). */
  static open<T>(path: string): SessionStore<T> {
    const parsed = readSession(path);
    if (parsed.version < CURRENT_SESSION_VERSION) {
      throw new CompactionError(
        ErrorCodes.TRANSCRIPT_INVALID,
        `Cannot manage the context of ${path}: it is a version ${parsed.version} session file, and messages and compactions can be appended only to version ${CURRENT_SESSION_VERSION} files.`,
        { file: path, hint: "Upgrade it first with upgradeSession(path) (keeps a .bak copy), or open it once in pi, which migrates it." },
      );
    }
    const context = buildContext(parsed.entries, { file: path });
    return new SessionStore<T>(path, context.messages as T[], context.entryIds, branchFacts(context.branch), compactionAnchor(context));
  }

  get messages(): readonly T[] {
    return this.#messages;
  }

  /** The After the branch's newest compaction entry recorded (our compactions; pi's record none). */
  get anchor(): ContextAnchor | undefined {
    return this.#anchor;
  }

  get compactions(): number {
    this.#refresh();
    return this.#facts.compactions;
  }

  /** Id of the entry each message came from (the compaction's id for its summary). */
  get entryIds(): readonly string[] {
    return this.#entryIds;
  }

  get keys(): readonly string[] {
    return this.#entryIds;
  }

  async append(messages: readonly T[]): Promise<void> {
    if (messages.length === 0) return;
    const entries = messages.map((message): NewEntry => ({ type: "message", message: message as PiMessage }));
    this.#refresh();
    const written = await appendEntries(this.path, entries);
    this.#knownSize = fileSize(this.path);
    for (let i = 0; i < messages.length; i++) {
      this.#messages.push(messages[i] as T);
      this.#entryIds.push((written[i] as SessionEntry).id);
    }
  }

  /** pi's compaction entry records a summary and the first entry kept, nothing else: the one path for pi sessions. */
  async compact(compactor: Compactor<T>, input: CompactInput<T>): Promise<CompactionResult<T>> {
    const branch = { messages: input.messages, entryIds: this.#entryIds.slice(0, input.messages.length) };
    const planned = await compactPiBranch(compactor, branch, input);
    this.#planned.set(planned.result, planned.plan);
    return planned.result;
  }

  async commit(result: CompactionResult<T>, since?: AppendedSince<T>): Promise<string> {
    const compaction = withAppended(this.#plannedCompaction(result), since);
    this.#refresh();
    const entry = await appendPiCompaction(this.path, compaction);
    this.#facts = { ...this.#facts, compactions: this.#facts.compactions + 1 };
    const reloaded = loadBoundary(this.path);
    this.#knownSize = fileSize(this.path);
    this.#messages = reloaded.messages as T[];
    this.#entryIds = reloaded.entryIds;
    this.#anchor = compactionAnchor(reloaded);
    return entry.id;
  }

  autoCompactSetting(): boolean | undefined {
    this.#refresh();
    return this.#facts.autoCompact;
  }

  /** The entry `compact` planned for `result`; refuses results pi's entry cannot record (planPiCompaction). */
  #plannedCompaction(result: CompactionResult<T>): PiCompaction {
    const plan = this.#planned.get(result);
    this.#planned.delete(result);
    if (plan?.ok) return plan.compaction;
    throw new CompactionError(
      ErrorCodes.CUT_REFUSED,
      `The compaction cannot be written to ${this.path}: ${plan?.reason ?? "the result was not compacted by this store's compact()."} Nothing was written.`,
      { file: this.path, hint: plan?.hint ?? "Commit the result the store's compact() returned." },
    );
  }

  /** Reads the branch facts again when another process wrote to the file since our last write. */
  #refresh(): void {
    const size = fileSize(this.path);
    if (size === this.#knownSize) return;
    this.#facts = branchFacts(buildContext(readSession(this.path).entries, { file: this.path }).branch);
    this.#knownSize = size;
  }
}

function branchFacts(branch: readonly SessionEntry[]): BranchFacts {
  let compactions = 0;
  for (const entry of branch) if (entry.type === "compaction") compactions += 1;
  return { compactions, autoCompact: sessionAutoCompact(branch) };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return -1;
  }
}
