/**
 * Recall in OpenClaw: when an agent's preset has recall (rolling does), the agent gets a tool
 * that searches every message of its session, the ones a rolling compaction evicted included.
 *
 * - **The name.** OpenClaw's memory plugin (memory-core, on by default) already gives agents a
 *   `memory_search` that searches the memory files, and OpenClaw skips a plugin tool whose name is
 *   taken. So here recall's tool is `compaction_recall` (RECALL_TOOL_NAME; OpenClaw needs every
 *   plugin tool's name in the manifest's `contracts.tools`, so it is fixed), and the compactors
 *   of this plugin name it in rolling's eviction note and in shrink markers (`withRecallTool`),
 *   whatever `recall.toolName` the `.compactionrc` gives for pi and the CLI.
 * - **The index.** Recall's index reads pi session files; OpenClaw keeps sessions in SQLite. The
 *   engine records each session's messages, as OpenClaw hands them over (assemble, commitTurn,
 *   afterTurn, and before each compaction), in a pi session file of this plugin's own
 *   (recall-journal.ts), and the tool searches recall's index of that file. OpenClaw's transcript
 *   is only read.
 * - **The tool.** Registered with `api.registerTool(factory, { name })`: OpenClaw calls the
 *   factory for each run with the session's agent, workspace and session id. Factories are
 *   synchronous, so the factory answers from the compactor already built for that agent: no tool
 *   when the agent's preset has no recall or its config is broken, the tool when it has recall.
 *   When nothing is built yet (the first run in a process asks for tools before the engine has
 *   read the config) the tool is offered, the compactor is built, and a call loads it and says so
 *   when recall is off.
 */
import { join } from "node:path";
import { Compactor, describeError, type PiMessage, type ResolvedConfig } from "@compaction/core";
import {
  connectRecall,
  memorySearchDescription,
  memorySearchParameters,
  PLUGIN_NAME as RECALL,
  RECALL_DEFAULTS,
  recall,
  type RecallConnection,
  recallSettings,
} from "@compaction/plugin-recall";
import { PLUGIN_NAME as ROLLING, rolling, type RollingOptions } from "@compaction/plugin-rolling";
import type { AgentMessage, AgentTool, AgentToolResult } from "./openclaw-api.js";
import type { MessageAnchor } from "./anchor.js";
import { journalName, RecallJournal } from "./recall-journal.js";

/** The name of recall's tool in OpenClaw (declared in openclaw.plugin.json's `contracts.tools`). */
export const RECALL_TOOL_NAME = "compaction_recall";

/**
 * `compactor` with recall's tool named `name`: its recall plugin provides `name` and rolling's
 * note names it. The same compactor when it has no recall or already uses that name. The copy
 * shares the original's token counter (the original keeps owning it).
 */
export function withRecallTool(compactor: Compactor<PiMessage>, name: string): Compactor<PiMessage> {
  const settings = recallSettings(compactor);
  if (settings === undefined || settings.toolName === name) return compactor;
  const plugins = compactor.plugins.map((plugin) => {
    if (plugin.name === RECALL && plugin.provides?.includes(settings.toolName) === true) return recall({ ...settings, toolName: name });
    const options = plugin.options as Partial<RollingOptions> | undefined;
    if (plugin.name === ROLLING && options?.recallTool === settings.toolName) return rolling({ ...options, recallTool: name });
    return plugin;
  });
  const ratio = (compactor.config as ResolvedConfig | undefined)?.tokenizer?.ratio;
  return new Compactor<PiMessage>({
    adapter: compactor.adapter,
    tokenCounter: compactor.tokens.counter,
    ownsTokenCounter: false,
    ...(ratio === undefined ? {} : { tokenRatio: ratio }),
    summarizer: compactor.summarizer,
    plugins,
    ...(compactor.contextWindow === undefined ? {} : { contextWindow: compactor.contextWindow }),
    ...(compactor.reserveTokens === undefined ? {} : { reserveTokens: compactor.reserveTokens }),
    reserveSource: compactor.reserveSource,
    ...(compactor.maxOutputTokens === undefined ? {} : { maxOutputTokens: compactor.maxOutputTokens }),
    summaryMaxTokens: compactor.summaryMaxTokens,
    autoCompact: compactor.autoCompact,
    config: compactor.config,
  });
}

/** One session of one agent: where its journal lives. */
export interface RecallSession {
  /** The agent's directory (`<state>/agents/<id>/agent`); the journal goes under `<agentDir>/compaction-plugin/recall/`. */
  readonly agentDir: string | undefined;
  readonly sessionId: string;
}

export interface SessionRecallOptions {
  /** The records directory for an agent directory (the same one the engine's store falls back to). */
  readonly recordsDir: (agentDir: string | undefined) => string;
  readonly toolName?: string;
}

/** The journals and recall connections of this plugin's sessions, shared by the engine and the tool. */
export class SessionRecall {
  readonly toolName: string;
  readonly #recordsDir: (agentDir: string | undefined) => string;
  readonly #journals = new Map<string, RecallJournal>();
  readonly #connections = new Map<string, Promise<RecallConnection | undefined>>();

  constructor(options: SessionRecallOptions) {
    this.toolName = options.toolName ?? RECALL_TOOL_NAME;
    this.#recordsDir = options.recordsDir;
  }

  /** The journal file of a session. */
  journalPath(session: RecallSession): string {
    return join(this.#recordsDir(session.agentDir), "recall", journalName(session.sessionId));
  }

  /**
   * Journals OpenClaw's messages of the session and brings an open index up to date: what the
   * engine does after each turn and before each compaction. With `view`, `messages` are OpenClaw's
   * messages from the journaled message `view.from` on (an assembled view without its head).
   * Nothing for a compactor without recall.
   */
  async sync(compactor: Compactor<PiMessage>, session: RecallSession, messages: readonly AgentMessage[], view?: { readonly from: MessageAnchor }): Promise<void> {
    if (recallSettings(compactor) === undefined) return;
    const journal = this.#journal(session);
    const synced = view === undefined ? journal.sync(messages) : journal.syncFrom(view.from, messages);
    if (synced === undefined || (synced.appended === 0 && !synced.rewritten)) return;
    const connection = await this.#connections.get(journal.path)?.catch(() => undefined);
    if (connection !== undefined) await connection.index.update();
  }

  /**
   * The tool for one session, for OpenClaw's tool factory. `compactor` is the session's compactor
   * when it is already built (its recall limits shape the arguments), `load` builds it.
   */
  tool(session: RecallSession, compactor: Compactor<PiMessage> | undefined, load: () => Promise<Compactor<PiMessage>>): AgentTool {
    const name = this.toolName;
    const settings = (compactor === undefined ? undefined : recallSettings(compactor)) ?? RECALL_DEFAULTS;
    return {
      name,
      label: "Compaction recall",
      // Always in the model's tool list, not behind OpenClaw's tool search: the eviction note names it.
      catalogMode: "direct-only",
      description: memorySearchDescription(name),
      parameters: memorySearchParameters({ limit: Math.min(settings.limit, settings.maxLimit), maxLimit: settings.maxLimit }),
      execute: async (toolCallId, params, signal) => {
        const connection = await this.#connect(session, await load());
        return connection.tool.definition.pi.execute(toolCallId, params, signal) as Promise<AgentToolResult>;
      },
    };
  }

  /** Stops updating the indexes and writes what they held back. */
  async dispose(): Promise<void> {
    const all = [...this.#connections.values()];
    this.#connections.clear();
    for (const settled of await Promise.allSettled(all)) {
      if (settled.status === "fulfilled" && settled.value !== undefined) {
        settled.value.detach();
        await settled.value.index.close();
      }
    }
  }

  /** Recall's index of the session's journal, opened once (throws a message for the model when there is nothing to search). */
  async #connect(session: RecallSession, compactor: Compactor<PiMessage>): Promise<RecallConnection> {
    if (recallSettings(compactor) === undefined) {
      const preset = (compactor.config as ResolvedConfig | undefined)?.preset ?? "the configured";
      throw new Error(
        `${this.toolName} is not available for this agent: its .compactionrc preset (${preset}) keeps no recall index, so compaction removes no message you could search for here.`,
      );
    }
    const journal = this.#journal(session);
    if (journal.length === 0) {
      throw new Error(`${this.toolName}: no message of this session has been recorded yet (the first is recorded after the first turn); nothing was evicted.`);
    }
    const path = journal.path;
    let connecting = this.#connections.get(path);
    if (connecting === undefined) {
      connecting = connectRecall(compactor, path);
      this.#connections.set(path, connecting);
      connecting.catch(() => {
        if (this.#connections.get(path) === connecting) this.#connections.delete(path);
      });
    }
    let connection: RecallConnection | undefined;
    try {
      connection = await connecting;
    } catch (error) {
      throw new Error(`${this.toolName} could not open the recall index of this session (${path}): ${describeError(error)}`);
    }
    if (connection === undefined) throw new Error(`${this.toolName}: this agent's compactor has no recall plugin.`);
    return connection;
  }

  #journal(session: RecallSession): RecallJournal {
    const path = this.journalPath(session);
    let journal = this.#journals.get(path);
    if (journal === undefined) {
      journal = new RecallJournal(path, session.sessionId);
      this.#journals.set(path, journal);
    }
    return journal;
  }
}
