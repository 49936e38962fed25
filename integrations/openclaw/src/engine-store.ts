/**
 * What the engine keeps between calls: each session's compaction: the summary (or eviction note) messages and
 * the first message kept. OpenClaw's transcript is never written or rewritten: the record lives
 * in OpenClaw's own plugin-state store (`api.runtime.state.openKeyedStore`, a retained
 * namespace of its shared state database), keyed by session id, and `assemble` applies it to the
 * messages OpenClaw sends. It also notes each committed turn's advancement key, so a turn OpenClaw
 * retries is known as a duplicate. Only a host without that store gets maps in memory (the
 * plugin then says that compactions last until OpenClaw exits).
 */
import type { MessageAnchor } from "./anchor.js";
import type { AgentMessage, KeyedStore, OpenClawPluginApi } from "./openclaw-api.js";

export const COMPACTIONS_NAMESPACE = "session-compactions";
export const TURNS_NAMESPACE = "committed-turns";

/** One session's newest compaction. */
export interface SessionCompaction {
  readonly version: 1;
  /** The messages that stand for everything before `firstKept` (a summary, or rolling's note). */
  readonly head: readonly AgentMessage[];
  /** The summary text (as the host's CompactResult reports it). */
  readonly summary: string;
  readonly firstKept: MessageAnchor;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly agent: string;
  readonly preset: string | null;
  /** ISO time of the compaction. */
  readonly at: string;
}

export interface EngineStore {
  /** True when the records outlive the process (OpenClaw's state store). */
  readonly durable: boolean;
  compaction(sessionId: string): Promise<SessionCompaction | undefined>;
  saveCompaction(sessionId: string, compaction: SessionCompaction): Promise<void>;
  /** Notes a committed turn: true the first time a key is seen, false for a retry (atomic in OpenClaw's store). */
  commitTurn(advancementKey: string, sessionId: string): Promise<boolean>;
}

/** OpenClaw's plugin-state store when the host has one, else maps in memory. */
export function openEngineStore(api: OpenClawPluginApi): EngineStore {
  const state = api.runtime?.state;
  const open = state?.openKeyedStore;
  if (typeof open !== "function") return memoryEngineStore();
  const opener = <T>(namespace: string) => {
    let store: Promise<KeyedStore<T>> | undefined;
    return (): Promise<KeyedStore<T>> => {
      store ??= Promise.resolve(open.call(state, { namespace, retention: "retained" }) as KeyedStore<T>);
      return store;
    };
  };
  const compactions = opener<SessionCompaction>(COMPACTIONS_NAMESPACE);
  const turns = opener<{ sessionId: string; at: string }>(TURNS_NAMESPACE);
  return {
    durable: true,
    async compaction(sessionId) {
      const found = await (await compactions()).lookup(sessionId);
      return isSessionCompaction(found) ? found : undefined;
    },
    async saveCompaction(sessionId, compaction) {
      await (await compactions()).register(sessionId, compaction);
    },
    async commitTurn(advancementKey, sessionId) {
      return (await turns()).registerIfAbsent(advancementKey, { sessionId, at: new Date().toISOString() });
    },
  };
}

export function memoryEngineStore(): EngineStore {
  const compactions = new Map<string, SessionCompaction>();
  const turns = new Set<string>();
  return {
    durable: false,
    compaction: async (sessionId) => compactions.get(sessionId),
    saveCompaction: async (sessionId, compaction) => {
      compactions.set(sessionId, compaction);
    },
    commitTurn: async (advancementKey) => {
      if (turns.has(advancementKey)) return false;
      turns.add(advancementKey);
      return true;
    },
  };
}

/** A stored value of another shape (another version of this plugin) is ignored, never misread. */
function isSessionCompaction(value: unknown): value is SessionCompaction {
  if (typeof value !== "object" || value === null) return false;
  const record = value as Partial<SessionCompaction>;
  return record.version === 1 && Array.isArray(record.head) && typeof record.summary === "string" && typeof record.firstKept?.digest === "string";
}
