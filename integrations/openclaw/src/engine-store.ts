/**
 * What the engine keeps between calls: each session's compaction: the summary (or eviction note) messages and
 * the first message kept. OpenClaw's transcript is never written or rewritten: the record lives
 * in OpenClaw's own plugin-state store (`api.runtime.state.openKeyedStore`, a retained
 * namespace of its shared state database), keyed by session id, and `assemble` applies it to the
 * messages OpenClaw sends. It also notes each committed turn's advancement key, so a turn OpenClaw
 * retries is known as a duplicate. Only a host without that store gets maps in memory (the
 * plugin then says that compactions last until OpenClaw exits).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
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
  /** The context before, in the provider's measure (its usage figure plus calibrated counts). */
  readonly tokensBefore: number;
  /**
   * The context after, in the same measure (the compaction event's `tokensAfterCompaction`).
   * Records written before 2026-11-25 hold our plain count of the messages.
   */
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

/**
 * OpenClaw's plugin-state store when the host gives it to this plugin. OpenClaw 2026.9 gives it
 * only to trusted plugins (installed from a registry, not linked from a path): otherwise the
 * records go to files of the plugin's own under `fallbackDir` (one JSON file per session, one
 * file per committed turn created exclusively, so a retry finds it), and `onFallback` says why.
 * A host without any store gets files too.
 */
export function openEngineStore(api: OpenClawPluginApi, fallbackDir: string, onFallback: (reason: string) => void): EngineStore {
  const state = api.runtime?.state;
  const open = state?.openKeyedStore;
  let chosen: Promise<EngineStore> | undefined;
  const choose = (): Promise<EngineStore> => {
    chosen ??= (async () => {
      if (typeof open !== "function") {
        onFallback("this OpenClaw has no plugin-state store");
        return fileEngineStore(fallbackDir);
      }
      try {
        const compactions = (await open.call(state, { namespace: COMPACTIONS_NAMESPACE, retention: "retained" })) as KeyedStore<SessionCompaction>;
        const turns = (await open.call(state, { namespace: TURNS_NAMESPACE, retention: "retained" })) as KeyedStore<{ sessionId: string; at: string }>;
        return hostEngineStore(compactions, turns);
      } catch (error) {
        onFallback(`OpenClaw's plugin-state store is not available to this plugin (${error instanceof Error ? error.message.split(". ")[0] : String(error)})`);
        return fileEngineStore(fallbackDir);
      }
    })();
    return chosen;
  };
  return {
    durable: true,
    compaction: async (sessionId) => (await choose()).compaction(sessionId),
    saveCompaction: async (sessionId, compaction) => (await choose()).saveCompaction(sessionId, compaction),
    commitTurn: async (key, sessionId) => (await choose()).commitTurn(key, sessionId),
  };
}

function hostEngineStore(compactions: KeyedStore<SessionCompaction>, turns: KeyedStore<{ sessionId: string; at: string }>): EngineStore {
  return {
    durable: true,
    async compaction(sessionId) {
      const found = await compactions.lookup(sessionId);
      return isSessionCompaction(found) ? found : undefined;
    },
    async saveCompaction(sessionId, compaction) {
      await compactions.register(sessionId, compaction);
    },
    async commitTurn(advancementKey, sessionId) {
      return turns.registerIfAbsent(advancementKey, { sessionId, at: new Date().toISOString() });
    },
  };
}

/** Records in files of the plugin's own: `<dir>/sessions/<id>.json` (replaced atomically), `<dir>/turns/<key>` (created exclusively). */
export function fileEngineStore(dir: string): EngineStore {
  const name = (key: string) => createHash("sha256").update(key).digest("hex").slice(0, 40);
  const sessionFile = (sessionId: string) => join(dir, "sessions", `${name(sessionId)}.json`);
  return {
    durable: true,
    async compaction(sessionId) {
      let text: string;
      try {
        text = readFileSync(sessionFile(sessionId), "utf8");
      } catch {
        return undefined;
      }
      try {
        const found = JSON.parse(text) as unknown;
        return isSessionCompaction(found) ? found : undefined;
      } catch {
        return undefined;
      }
    },
    async saveCompaction(sessionId, compaction) {
      const file = sessionFile(sessionId);
      mkdirSync(join(dir, "sessions"), { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      writeFileSync(temporary, JSON.stringify(compaction));
      renameSync(temporary, file);
    },
    async commitTurn(advancementKey, sessionId) {
      mkdirSync(join(dir, "turns"), { recursive: true });
      try {
        writeFileSync(join(dir, "turns", name(advancementKey)), JSON.stringify({ sessionId, at: new Date().toISOString() }), { flag: "wx" });
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code === "EEXIST") return false;
        throw error;
      }
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
