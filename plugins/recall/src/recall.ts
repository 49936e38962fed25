import {
  type CompactionPlugin,
  type Compactor,
  createOptionsValidator,
  describeError,
  STAGE_PERSIST,
} from "@compaction/core";
import { indexPathFor } from "./index-file.js";
import { type MemorySearchTool, memorySearchTool } from "./memory-search-tool.js";
import { RECALL_OPTIONS_SCHEMA, type RecallOptions, type RecallOptionsInput } from "./options.js";
import type { EntryStore } from "@compaction/transcript";
import { openRecallIndex, type RecallIndex, type RecallProgress } from "./recall-index.js";
import { openStoreRecallIndex, type StoreRecallIndex } from "./store-recall-index.js";
import type { RecallScorer } from "./scorer.js";

export const PLUGIN_NAME = "recall";

/** afterCompact stage of the index update: after plugins that persist at STAGE_PERSIST (their entries get indexed), before reports. */
export const STAGE_INDEX = STAGE_PERSIST + 50;

const validateOptions = createOptionsValidator<RecallOptions>(PLUGIN_NAME, RECALL_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

// biome-ignore lint: a compactor of any message format
type AnyCompactor = Compactor<any>;

interface Attached {
  readonly settings: RecallOptions;
  readonly indexes: Set<RecallIndex | StoreRecallIndex>;
}

/** The recall settings and open indexes of each compactor the plugin was applied to. */
const attachedTo = new WeakMap<AnyCompactor, Attached>();

/**
 * Recall: every message of the session stays searchable (evicted and summarised ones too)
 * through the `memory_search` tool. Declares the tool as a capability, so rolling evicts (and
 * names the tool in its note) instead of falling back to a summary. The host opens the
 * session's index with `connectRecall(compactor, sessionPath | store)` and registers the tool it returns;
 * after each compaction the plugin brings the connected indexes up to date.
 */
export function recall(options?: RecallOptionsInput): CompactionPlugin {
  const settings = validateOptions(options);
  return {
    name: PLUGIN_NAME,
    options: settings as unknown as Readonly<Record<string, unknown>>,
    provides: [settings.toolName],
    apply(compactor) {
      const attached: Attached = { settings, indexes: new Set() };
      attachedTo.set(compactor, attached);
      compactor.hooks.afterCompact.tapPromise({ name: PLUGIN_NAME, stage: STAGE_INDEX }, async (result, run) => {
        if (result.status !== "compacted") return;
        for (const index of attached.indexes) {
          try {
            const update = await index.update();
            if (update.saveError !== null) run.warn(`the recall index works, but ${update.saveError}`);
          } catch (error) {
            run.warn(
              `could not update the recall index of ${index.sessionPath}: ${describeError(error)}. ${settings.toolName} may miss the newest entries until the next update.`,
            );
          }
        }
      });
    },
  };
}

/** The options of the recall plugin applied to `compactor`, or undefined when it has none. */
export function recallSettings(compactor: AnyCompactor): RecallOptions | undefined {
  return attachedTo.get(compactor)?.settings;
}

export interface ConnectRecallOptions {
  /** Progress of a (re)build of the index. */
  readonly onProgress?: (progress: RecallProgress) => void;
  /** Ranking; default BM25. */
  readonly scorer?: RecallScorer;
  /** The agent's current leaf entry id, when it is not the transcript's last entry. */
  readonly leafId?: () => string | null | undefined;
  /** Overrides the index path the plugin's `indexDir` gives (session files only). */
  readonly indexPath?: string;
}

/** A session's recall index connected to a compactor, and the tool to give the agent. */
export interface RecallConnection<I extends RecallIndex | StoreRecallIndex = RecallIndex> {
  /** A session file's index (`RecallIndex`), or a session store's (`StoreRecallIndex`). */
  readonly index: I;
  readonly tool: MemorySearchTool;
  /** Stops updating the index after compactions (close the index too when done with it). */
  detach(): void;
}

/**
 * Opens (building if needed) the recall index of the session at `session` with the settings of
 * the recall plugin applied to `compactor`, keeps it updated after each compaction, and builds
 * the memory_search tool over it. `session` is a pi session file's path, or a session store
 * (`EntryStore`): then the store's own full-text search ranks when it has one (SQLite FTS5,
 * Postgres tsvector), else the entries are indexed in memory (see `StoreRecallIndex`). Undefined
 * when the compactor has no recall plugin.
 */
export async function connectRecall(compactor: AnyCompactor, session: string, options?: ConnectRecallOptions): Promise<RecallConnection | undefined>;
export async function connectRecall(compactor: AnyCompactor, session: EntryStore, options?: ConnectRecallOptions): Promise<RecallConnection<StoreRecallIndex> | undefined>;
export async function connectRecall(
  compactor: AnyCompactor,
  session: string | EntryStore,
  options: ConnectRecallOptions = {},
): Promise<RecallConnection<RecallIndex | StoreRecallIndex> | undefined> {
  const attached = attachedTo.get(compactor);
  if (attached === undefined) return undefined;
  const settings = attached.settings;
  const index =
    typeof session === "string"
      ? await openRecallIndex(session, {
          indexPath: options.indexPath ?? indexPathFor(session, settings.indexDir),
          saveAfterBytes: settings.saveAfterBytes,
          snippetChars: settings.snippetChars,
          ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
          ...(options.scorer === undefined ? {} : { scorer: options.scorer }),
        })
      : await openStoreRecallIndex(session, {
          snippetChars: settings.snippetChars,
          ...(options.scorer === undefined ? {} : { scorer: options.scorer, preferScorer: true }),
        });
  attached.indexes.add(index);
  const tool = memorySearchTool(index, {
    name: settings.toolName,
    limit: settings.limit,
    maxLimit: settings.maxLimit,
    maxEntryChars: settings.maxEntryChars,
    ...(options.leafId === undefined ? {} : { leafId: options.leafId }),
  });
  return { index, tool, detach: () => attached.indexes.delete(index) };
}
