/**
 * The context engine: OpenClaw's `plugins.slots.contextEngine` selects it and it owns
 * compaction (`info.ownsCompaction`).
 *
 * - `assemble` returns what the model sees: the session's compaction (its summary, then the
 *   messages from the first one kept) applied to the messages OpenClaw sends, with old tool
 *   outputs pruned when the context is large (the pi extension's send-time pruning, layered's
 *   thresholds), and the estimate OpenClaw compares with its token budget. OpenClaw's budgets are
 *   in the provider's measure (a model's context window), so each is compared with our count at
 *   the calibrated ratio (`tokens.budgetRatio`: Claude counts about 1.25x o200k), and the
 *   estimate is given at that ratio too (a compaction's own budget uses the run's ratio when that
 *   is higher, see `Compactor`).
 * - `compact` (OpenClaw's `/compact`, its overflow recovery, and our own threshold check after
 *   each turn) runs the agent's preset from `.compactionrc` over that context. The result is kept
 *   in OpenClaw's plugin-state store (see engine-store.ts); the transcript is never touched.
 * - `ingest` / `commitTurn` / `afterTurn` keep the session's messages known to the engine, and
 *   `commitTurn` / `afterTurn` compact when the context passes the preset's auto-compaction
 *   threshold (OpenClaw 2026.9 calls `commitTurn`, not `afterTurn`, after a turn of an engine
 *   with its durable-turn contract; the budget is the one of the session's newest `assemble`).
 *   `assemble`, `commitTurn`, `afterTurn` and `compact` also record the messages for recall's
 *   index (agents with recall only, see recall-tool.ts).
 *
 * Each session runs on core's `HostLoop`, made for the token budget of the session's first call
 * with its model (a new one when `assemble` names another model, or the config changes): the
 * threshold, the wait after an automatic compaction that left the context over it (the next waits
 * until the context has grown by a quarter of the budget, so a failing summarizer is not called
 * after every turn), and the prefix-stable shaping of what `assemble` sends (to each call's own
 * budget), whose COMPACTION_CONTEXT_TRIMMED (older messages left out) and
 * COMPACTION_CONTEXT_OVERFLOW (nothing fits) are logged as warnings. OpenClaw's budget changes with
 * every call of a turn (it is its context budget less the turn's pending messages), so a new
 * budget alone does not make a new loop: that would forget the wait and the forms already sent.
 */
import { type Compactor, countedBudget, defaultReserveTokens, HostLoop, type PiMessage, type ResolvedConfig } from "@compaction/core";
import { ensureRequestPruning } from "@compaction/plugin-layered";
import { planPiCompaction } from "@compaction/transcript";
import { anchorOf, findAnchor, sameAnchor } from "./anchor.js";
import { CompactorCache } from "./compactor-cache.js";
import type { EngineStore, SessionCompaction } from "./engine-store.js";
import type {
  AfterTurnParams,
  AgentMessage,
  AssembleParams,
  AssembleResult,
  CommitTurnParams,
  CompactParams,
  CompactResult,
  ContextEngine,
  ContextEngineFactoryContext,
  ContextEngineInfo,
  IngestParams,
} from "./openclaw-api.js";
import { agentOf, compactorFor } from "./agent-compactor.js";
import type { ResolvedOpenClawOptions } from "./options.js";
import type { SessionRecall } from "./recall-tool.js";

export const ENGINE_ID = "compaction";

/** Reads a session's messages through OpenClaw when the engine has not seen them in this process. */
export type TranscriptReader = (target: { agentId: string | undefined; sessionId: string; sessionKey: string }) => Promise<readonly AgentMessage[] | undefined>;

export interface EngineDeps {
  readonly options: ResolvedOpenClawOptions;
  readonly store: EngineStore;
  readonly compactors: CompactorCache;
  readonly factory: ContextEngineFactoryContext;
  readonly readTranscript?: TranscriptReader;
  readonly warn: (message: string) => void;
  readonly version?: string;
  /** Keeps recall's index of each session current, for agents whose preset has recall. */
  readonly recall?: SessionRecall;
}

/** Why a compaction was asked for, in our terms: `/compact` and forced runs are manual. */
function triggerOf(params: CompactParams): "auto" | "manual" {
  return params.force === true || params.customInstructions !== undefined ? "manual" : "auto";
}

export class CompactionEngine implements ContextEngine {
  readonly info: ContextEngineInfo;
  readonly #deps: EngineDeps;
  /** The newest messages OpenClaw showed us per session (its transcript's visible messages). */
  readonly #seen = new Map<string, readonly AgentMessage[]>();
  /** The token budget and model of each session's newest assemble (commitTurn is not given them). */
  readonly #budgets = new Map<string, number>();
  readonly #models = new Map<string, string | undefined>();
  /** Each session's host loop, with the compactor and model it was made for (a change of either makes a new one). */
  readonly #loops = new Map<string, { readonly compactor: Compactor<PiMessage>; readonly model: string | undefined; readonly loop: HostLoop<PiMessage> }>();
  readonly #warned = new Set<string>();

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    this.info = {
      id: ENGINE_ID,
      name: "Compaction (.compactionrc presets)",
      ...(deps.version === undefined ? {} : { version: deps.version }),
      ownsCompaction: true,
      transcriptSemantics: { currentTurnFence: "before-current-turn-entry-v1", turnAdvancementIdempotency: "atomic-idempotent-v1" },
    };
  }

  async ingest(params: IngestParams): Promise<{ ingested: boolean }> {
    const known = this.#seen.get(params.sessionId);
    if (known === undefined) return { ingested: false };
    this.#seen.set(params.sessionId, [...known, params.message]);
    return { ingested: true };
  }

  async commitTurn(params: CommitTurnParams): Promise<{ status: "committed" | "duplicate" }> {
    const first = await this.#deps.store.commitTurn(params.advancementKey, params.sessionId);
    if (!first) return { status: "duplicate" };
    const known = this.#seen.get(params.sessionId);
    if (known === undefined) return { status: "committed" };
    const messages = [...known, ...params.messages];
    this.#seen.set(params.sessionId, messages);
    // OpenClaw 2026.9 calls commitTurn instead of afterTurn for an engine with its durable-turn
    // contract: what afterTurn does happens here too, with the budget of the session's last assemble.
    if (params.isHeartbeat !== true) {
      let compactor: Compactor<PiMessage> | undefined;
      try {
        compactor = await this.#compactorFor(params.sessionKey);
      } catch {
        // a broken config: assemble reports it
      }
      if (compactor !== undefined) {
        await this.#journal(compactor, params.sessionId, messages);
        await this.#compactPastThreshold(compactor, params.sessionId, params.sessionKey, messages, this.#budgets.get(params.sessionId));
      }
    }
    return { status: "committed" };
  }

  async assemble(params: AssembleParams): Promise<AssembleResult> {
    this.#seen.set(params.sessionId, params.messages);
    if (params.tokenBudget !== undefined && params.tokenBudget > 0) this.#budgets.set(params.sessionId, params.tokenBudget);
    this.#models.set(params.sessionId, params.model);
    const compaction = await this.#deps.store.compaction(params.sessionId);
    const view = this.#applied(params.messages, compaction, params.sessionId);
    let compactor: Compactor<PiMessage>;
    try {
      compactor = await this.#compactorFor(params.sessionKey);
    } catch (error) {
      this.#warnOnce(`compaction: ${describe(error)}; the context is sent without pruning.`);
      return { messages: [...view], estimatedTokens: roughTokens(view) };
    }
    await this.#journal(compactor, params.sessionId, params.messages);
    let messages = view;
    // From OpenClaw's whole transcript: the compacted view holds too few usage figures to learn from.
    const ratio = budgetRatio(compactor, params.messages);
    if (params.tokenBudget !== undefined && params.tokenBudget > 0) {
      // The session loop's request: old tool outputs pruned by layered's rules (pruneContext), then
      // what is still over the budget shrunk to head and tail; prefix-stable per session (a message
      // shrunk once goes out in the same form until the next compaction: the prompt cache holds).
      // The budget is the provider's measure, so it is our count at the calibrated ratio.
      try {
        const pruneContext = this.#deps.options.pruneContext;
        if (pruneContext) ensureRequestPruning(compactor);
        const loop = this.#loopFor(params.sessionId, compactor, params.tokenBudget);
        const { request, problem } = loop.request(view as unknown as PiMessage[], countedBudget(params.tokenBudget, ratio), { plugins: pruneContext });
        for (const warning of request.warnings) this.#warnOnce(`compaction: ${warning}`);
        if (problem !== null) this.#warnOnce(`compaction: session ${params.sessionId}: ${problem.message} ${problem.hint ?? ""} [${problem.code}]`);
        messages = request.messages as unknown as AgentMessage[];
      } catch (error) {
        this.#warnOnce(`compaction: could not shape the request: ${describe(error)}. The messages were sent unchanged.`);
      }
    }
    return { messages: [...messages], estimatedTokens: Math.ceil(countTokens(compactor, messages) * ratio) };
  }

  async afterTurn(params: AfterTurnParams): Promise<void> {
    this.#seen.set(params.sessionId, params.messages);
    if (params.isHeartbeat === true) return;
    let compactor: Compactor<PiMessage>;
    try {
      compactor = await this.#compactorFor(params.sessionKey);
    } catch {
      return; // assemble reports a broken config
    }
    await this.#journal(compactor, params.sessionId, params.messages);
    await this.#compactPastThreshold(compactor, params.sessionId, params.sessionKey, params.messages, params.tokenBudget);
  }

  /**
   * After a turn: compacts when the context passes the preset's auto-compaction threshold of the
   * budget, unless the session's loop waits after a compaction that could not bring it under (it
   * failed, declined or freed too little): then only once the context has grown by a quarter of the
   * budget, or a new user message ended the turn that was too large.
   */
  async #compactPastThreshold(
    compactor: Compactor<PiMessage>,
    sessionId: string,
    sessionKey: string | undefined,
    messages: readonly AgentMessage[],
    tokenBudget: number | undefined,
  ): Promise<void> {
    if (sessionKey === undefined || tokenBudget === undefined || !compactor.autoCompact.enabled) return;
    const loop = this.#loopFor(sessionId, compactor, tokenBudget);
    // The budget is the provider's measure: our count at the calibrated ratio is compared with it.
    const ratio = budgetRatio(compactor, messages);
    const view = this.#applied(messages, await this.#deps.store.compaction(sessionId), sessionId);
    if (!loop.due(countTokens(compactor, view) * ratio, view as unknown as PiMessage[])) return;
    let failure: string | undefined;
    try {
      const result = await this.compact({ sessionId, sessionKey, tokenBudget });
      if (!result.ok) failure = result.reason ?? "no reason given";
    } catch (error) {
      failure = describe(error);
    }
    const after = this.#applied(messages, await this.#deps.store.compaction(sessionId), sessionId);
    const growth = loop.settle(countTokens(compactor, after) * ratio, after as unknown as PiMessage[]);
    if (failure !== undefined) {
      const wait = growth === null ? "" : ` The next one after a turn waits until the context has grown by ${growth} tokens (a quarter of the budget).`;
      this.#warnOnce(`compaction: the compaction after a turn failed: ${failure}${wait}`);
    }
  }

  #reserveFor(compactor: Compactor<PiMessage>, tokenBudget: number): number {
    try {
      return compactor.reserveFor(tokenBudget);
    } catch (error) {
      this.#warnOnce(`compaction: ${describe(error)} The budget's own reserve (${defaultReserveTokens(tokenBudget)} tokens) is used instead.`);
      return defaultReserveTokens(tokenBudget);
    }
  }

  async compact(params: CompactParams): Promise<CompactResult> {
    const messages = this.#seen.get(params.sessionId) ?? (await this.#read(params));
    if (messages === undefined) {
      return { ok: false, compacted: false, reason: `The compaction engine has no messages of session ${params.sessionId} (OpenClaw has not assembled it in this process, and its transcript could not be read).` };
    }
    let compactor: Compactor<PiMessage>;
    try {
      compactor = await this.#compactorFor(params.sessionKey, params.agentId);
    } catch (error) {
      return { ok: false, compacted: false, reason: describe(error) };
    }
    // Every message OpenClaw has is journaled for recall before any of them is evicted.
    await this.#journal(compactor, params.sessionId, messages);
    const previous = await this.#deps.store.compaction(params.sessionId);
    const view = this.#applied(messages, previous, params.sessionId);
    const contextWindow = params.tokenBudget ?? compactor.contextWindow ?? (compactor.config as ResolvedConfig | undefined)?.contextWindow;
    // The reply's reserve for OpenClaw's budget (the config's, else the budget's own: an eighth of
    // a small model's). OpenClaw learns of the budget only per call, so a config reserve that
    // cannot fit it is said once and the budget's own reserve used, not a compaction failing at every turn.
    const reserveTokens = params.tokenBudget === undefined ? undefined : this.#reserveFor(compactor, params.tokenBudget);
    const focus = params.customInstructions?.trim();
    const agent = this.#agentOf(params.sessionKey, params.agentId);
    const result = await compactor.compact({
      messages: view as unknown as PiMessage[],
      suffixOnly: true,
      trigger: triggerOf(params),
      ...(contextWindow === undefined ? {} : { contextWindow }),
      ...(reserveTokens === undefined ? {} : { reserveTokens }),
      ...(focus ? { focus } : {}),
      ...(agent === undefined ? {} : { agent }),
      ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
    });
    const plan = planPiCompaction(result, view.map((_, index) => String(index)));
    if (!plan.ok) {
      const failed = result.status === "failed" || result.status === "cancelled";
      return { ok: !failed, compacted: false, reason: `${plan.reason} ${plan.hint}`.trim() };
    }
    // After in Before's measure (the provider's, as the run sized what it kept), as our pi and CLI
    // records give it; the result's own tokensAfter is our plain count.
    const tokensAfter = result.event?.tokensAfterCompaction ?? result.tokensAfter;
    const keptFrom = Number(plan.compaction.firstKeptEntryId);
    const kept = view.length - keptFrom;
    const head = result.messages.slice(0, result.messages.length - kept) as unknown as AgentMessage[];
    const record: SessionCompaction = {
      version: 1,
      head,
      summary: plan.compaction.summary,
      firstKept: anchorOf(view[keptFrom] as AgentMessage),
      tokensBefore: result.tokensBefore,
      tokensAfter,
      agent: agent ?? "default",
      preset: (compactor.config as ResolvedConfig | undefined)?.preset ?? null,
      at: new Date().toISOString(),
    };
    await this.#deps.store.saveCompaction(params.sessionId, record);
    // The context was replaced: what the loop waited for no longer applies (the shaper sees the new view itself).
    this.#loops.get(params.sessionId)?.loop.reset();
    return {
      ok: true,
      compacted: true,
      result: { summary: record.summary, tokensBefore: result.tokensBefore, tokensAfter, details: plan.compaction.details },
    };
  }

  async dispose(): Promise<void> {
    this.#seen.clear();
    this.#budgets.clear();
    this.#models.clear();
    this.#loops.clear();
  }

  /**
   * The session's loop, made for `tokenBudget` when the session has none for this compactor and
   * the model of its newest `assemble`. OpenClaw's budget is already the room for the messages
   * (its context budget less the current turn's pending messages), so the loop reserves nothing
   * off it again: its threshold is the preset's share of the budget, and `assemble` shapes to each
   * call's own budget.
   */
  #loopFor(sessionId: string, compactor: Compactor<PiMessage>, tokenBudget: number): HostLoop<PiMessage> {
    const model = this.#models.get(sessionId);
    const known = this.#loops.get(sessionId);
    if (known !== undefined && known.compactor === compactor && known.model === model) return known.loop;
    const loop = new HostLoop(compactor, { contextWindow: tokenBudget, reserveTokens: 0, host: "@compaction/openclaw" });
    this.#loops.set(sessionId, { compactor, model, loop });
    return loop;
  }

  /** The session's compaction applied to OpenClaw's messages: its head, then the messages from the first kept one. */
  #applied(messages: readonly AgentMessage[], compaction: SessionCompaction | undefined, sessionId: string): readonly AgentMessage[] {
    if (compaction === undefined) return messages;
    const from = findAnchor(messages, compaction.firstKept);
    if (from < 0) {
      this.#warnOnce(
        `compaction: session ${sessionId}: the first message kept by the compaction of ${compaction.at} is no longer in OpenClaw's transcript (rewound or replaced); the whole transcript is sent until the next compaction.`,
      );
      return messages;
    }
    return [...compaction.head, ...messages.slice(from)];
  }

  #agentOf(sessionKey: string | undefined, agentId?: string): string | undefined {
    return agentOf(this.#deps.options, { sessionKey, agentId });
  }

  /** The compactor for the session's agent (see agent-compactor.ts). */
  #compactorFor(sessionKey: string | undefined, agentId?: string): Promise<Compactor<PiMessage>> {
    return compactorFor(this.#deps.compactors, this.#deps.options, { workspaceDir: this.#deps.factory.workspaceDir, sessionKey, agentId });
  }

  async #read(params: CompactParams): Promise<readonly AgentMessage[] | undefined> {
    if (this.#deps.readTranscript === undefined) return undefined;
    try {
      return await this.#deps.readTranscript({ agentId: this.#agentOf(params.sessionKey, params.agentId), sessionId: params.sessionId, sessionKey: params.sessionKey });
    } catch (error) {
      this.#warnOnce(`compaction: could not read session ${params.sessionId} through OpenClaw: ${describe(error)}`);
      return undefined;
    }
  }

  /** Journals the session's messages for recall (agents with recall only); a failure is reported, never fatal to the turn. */
  async #journal(compactor: Compactor<PiMessage>, sessionId: string, messages: readonly AgentMessage[]): Promise<void> {
    const recall = this.#deps.recall;
    if (recall === undefined) return;
    try {
      // After a compaction OpenClaw hands the engine what assemble returned (the compaction's head,
      // then the messages from the first kept one): only what follows the head is recorded, after
      // the journaled first kept message, so the evicted messages stay in the journal.
      const compaction = await this.#deps.store.compaction(sessionId);
      const session = { agentDir: this.#deps.factory.agentDir, sessionId };
      if (compaction !== undefined && startsWithHead(messages, compaction)) {
        await recall.sync(compactor, session, messages.slice(compaction.head.length), { from: compaction.firstKept });
      } else {
        await recall.sync(compactor, session, messages);
      }
    } catch (error) {
      this.#warnOnce(`compaction: could not record session ${sessionId} for ${recall.toolName}: ${describe(error)}. Evicted messages may not be found by it.`);
    }
  }

  #warnOnce(message: string): void {
    if (this.#warned.has(message)) return;
    this.#warned.add(message);
    this.#deps.warn(message);
  }
}

/** Whether `messages` begin with the compaction's head (they are an assembled view, not OpenClaw's transcript). */
function startsWithHead(messages: readonly AgentMessage[], compaction: SessionCompaction): boolean {
  const head = compaction.head;
  if (head.length === 0 || messages.length < head.length) return false;
  return head.every((message, index) => sameAnchor(anchorOf(message), anchorOf(messages[index] as AgentMessage)));
}

function countTokens(compactor: Compactor<PiMessage>, messages: readonly AgentMessage[]): number {
  let total = 0;
  for (const message of messages) {
    try {
      total += compactor.tokens.count(message as unknown as PiMessage);
    } catch {
      total += roughTokens([message]);
    }
  }
  return total;
}

/** The calibrated ratio of the provider's count to ours (at least 1), or 1 for messages our adapter cannot read. */
function budgetRatio(compactor: Compactor<PiMessage>, messages: readonly AgentMessage[]): number {
  try {
    return compactor.tokens.budgetRatio(messages as unknown as PiMessage[]);
  } catch {
    return 1;
  }
}

/** Four characters a token: for messages our adapter cannot read (an estimate is all OpenClaw asks). */
function roughTokens(messages: readonly AgentMessage[]): number {
  return Math.ceil(messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0) / 4);
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const hint = (error as { hint?: unknown }).hint;
    return `${typeof code === "string" ? `${code}: ` : ""}${error.message}${typeof hint === "string" && hint !== "" ? ` ${hint}` : ""}`;
  }
  return String(error);
}
