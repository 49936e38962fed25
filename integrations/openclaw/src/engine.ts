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
 *
 * With background compaction (`background`, on with a model summarizer) the loop also prepares:
 * after a turn (`commitTurn` / `afterTurn`), past the prepare mark, the preset compacts the view as
 * it is then while OpenClaw goes on (core's `backgroundCheck`); the prepared compaction is put in
 * place, with the messages OpenClaw appended since, after the turn that passes the threshold, at
 * `assemble` (past the threshold, or with the prompt cache cold), or when OpenClaw asks to
 * `compact` (core's `takePreparation`: a `/compact` with instructions, or a view the snapshot no
 * longer starts, drops it). Each step is logged as info, a dropped one with what it cost.
 */
import {
  backgroundCheck,
  type CompactionResult,
  type Compactor,
  countedBudget,
  defaultReserveTokens,
  describeBackgroundEvent,
  describeError,
  type HeldContext,
  HostLoop,
  type PiMessage,
  type Preparation,
  type ResolvedConfig,
  type Summarizer,
  takePreparation,
  untouchedResult,
} from "@compaction/core";
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
  /** Where news goes (a compaction prepared in the background, put in place or dropped). Default: nowhere. */
  readonly info?: (message: string) => void;
  readonly version?: string;
  /** Keeps recall's index of each session current, for agents whose preset has recall. */
  readonly recall?: SessionRecall;
  /**
   * Each session's host loop, shared by the engines the plugin makes (OpenClaw makes one per run),
   * so that a compaction prepared after one turn is put in place in a later run, and the wait after
   * a compaction that could not free enough holds across runs. Default: the engine's own.
   */
  readonly loops?: SessionLoops;
}

/** A session's host loop, with the compactor and model it was made for (a change of either makes a new one). */
export interface SessionLoop {
  readonly compactor: Compactor<PiMessage>;
  readonly model: string | undefined;
  readonly loop: HostLoop<PiMessage>;
}

/** The sessions' loops, by session id. */
export type SessionLoops = Map<string, SessionLoop>;

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
  readonly #loops: SessionLoops;
  readonly #warned = new Set<string>();

  constructor(deps: EngineDeps) {
    this.#deps = deps;
    this.#loops = deps.loops ?? new Map();
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
    let compaction = await this.#deps.store.compaction(params.sessionId);
    let view = this.#applied(params.messages, compaction, params.sessionId);
    let compactor: Compactor<PiMessage>;
    try {
      compactor = await this.#compactorFor(params.sessionKey);
    } catch (error) {
      this.#warnOnce(`compaction: ${describe(error)}; the context is sent without pruning.`);
      return { messages: [...view], estimatedTokens: roughTokens(view) };
    }
    await this.#journal(compactor, params.sessionId, params.messages);
    // A compaction prepared in the background is put in place here when this request is past the
    // threshold (or the prompt cache went cold); one that cannot be sent otherwise waits for it.
    if (params.sessionKey !== undefined && params.tokenBudget !== undefined && params.tokenBudget > 0 && compactor.autoCompact.enabled) {
      const loop = this.#loopFor(params.sessionId, compactor, params.tokenBudget);
      if (loop.background && (await this.#backgroundCheck(loop, compactor, params.sessionId, params.sessionKey, params.messages, params.tokenBudget)) !== null) {
        compaction = await this.#deps.store.compaction(params.sessionId);
        view = this.#applied(params.messages, compaction, params.sessionId);
      }
    }
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
        // OpenClaw sends it now: the provider's prompt cache is warm from here.
        loop.sent();
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
    if (loop.background) {
      await this.#backgroundCheck(loop, compactor, sessionId, sessionKey, messages, tokenBudget);
      return;
    }
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
    return this.#compactSession(params);
  }

  /**
   * OpenClaw's `compact`, and the foreground compaction of `#backgroundCheck` (`summarizer`: the
   * no-model one, past the wait's deadline). Takes the compaction prepared in the background when
   * it still applies (core's `takePreparation`), else runs the agent's preset over the view.
   */
  async #compactSession(params: CompactParams, summarizer?: Summarizer): Promise<CompactResult> {
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
    const view = this.#applied(messages, await this.#deps.store.compaction(params.sessionId), params.sessionId);
    const focus = params.customInstructions?.trim();
    const agent = this.#agentOf(params.sessionKey, params.agentId);
    const known = this.#loops.get(params.sessionId);
    let noModel = summarizer;
    if (known !== undefined && known.compactor === compactor && known.loop.prepared !== null) {
      const held = this.#held(compactor, view, budgetRatio(compactor, messages));
      const taken = await takePreparation(known.loop, held, { trigger: triggerOf(params), focus, signal: params.abortSignal }, { report: (event) => this.#info(describeBackgroundEvent(event)) });
      if (taken.kind === "prepared") return this.#putPrepared(params.sessionId, compactor, known.loop, taken.preparation, held.tokens, agent);
      noModel ??= taken.summarizer;
    }
    const result = await this.#run(compactor, view, {
      trigger: triggerOf(params),
      tokenBudget: params.tokenBudget,
      ...(focus ? { focus } : {}),
      ...(agent === undefined ? {} : { agent }),
      ...(params.abortSignal === undefined ? {} : { signal: params.abortSignal }),
      ...(noModel === undefined ? {} : { summarizer: noModel }),
    });
    return this.#save(params.sessionId, compactor, result, view, agent, 0);
  }

  /**
   * The agent's preset over `view` (`suffixOnly`: OpenClaw's transcript is never rewritten), for
   * OpenClaw's budget: its window, and the reply's reserve for it (the config's, else the budget's
   * own: an eighth of a small model's; OpenClaw learns of the budget only per call, so a config
   * reserve that cannot fit it is said once and the budget's own used, not a compaction failing at
   * every turn). Never throws: a compactor that throws is a `failed` result.
   */
  async #run(
    compactor: Compactor<PiMessage>,
    view: readonly AgentMessage[],
    input: { trigger: "auto" | "manual"; tokenBudget: number | undefined; focus?: string; agent?: string; signal?: AbortSignal; targetTokens?: number; summarizer?: Summarizer },
  ): Promise<CompactionResult<PiMessage>> {
    const contextWindow = input.tokenBudget ?? compactor.contextWindow ?? (compactor.config as ResolvedConfig | undefined)?.contextWindow;
    const reserveTokens = input.tokenBudget === undefined ? undefined : this.#reserveFor(compactor, input.tokenBudget);
    try {
      return await compactor.compact({
        messages: view as unknown as PiMessage[],
        suffixOnly: true,
        trigger: input.trigger,
        ...(contextWindow === undefined ? {} : { contextWindow }),
        ...(reserveTokens === undefined ? {} : { reserveTokens }),
        ...(input.focus === undefined ? {} : { focus: input.focus }),
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
        ...(input.targetTokens === undefined ? {} : { targetTokens: input.targetTokens }),
        ...(input.summarizer === undefined ? {} : { summarizer: input.summarizer }),
      });
    } catch (error) {
      return untouchedResult(view as unknown as PiMessage[], countTokens(compactor, view), "failed", `the compactor rejected the run: ${describeError(error)}`);
    }
  }

  /**
   * Records `result`, a compaction of `view`, as the session's compaction (its head, then the
   * messages from the first one kept; `appendedTokens`: what OpenClaw appended since the view, for
   * one prepared in the background, counted in its After). The loop's wait is forgotten: the
   * context was replaced.
   */
  async #save(sessionId: string, compactor: Compactor<PiMessage>, result: CompactionResult<PiMessage>, view: readonly AgentMessage[], agent: string | undefined, appendedTokens: number): Promise<CompactResult> {
    const plan = planPiCompaction(result, view.map((_, index) => String(index)));
    if (!plan.ok) {
      const failed = result.status === "failed" || result.status === "cancelled";
      return { ok: !failed, compacted: false, reason: `${plan.reason} ${plan.hint}`.trim() };
    }
    // After in Before's measure (the provider's, as the run sized what it kept), as our pi and CLI
    // records give it; the result's own tokensAfter is our plain count.
    const tokensAfter = (result.event?.tokensAfterCompaction ?? result.tokensAfter) + appendedTokens;
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
    await this.#deps.store.saveCompaction(sessionId, record);
    // The context was replaced: what the loop waited for no longer applies (the shaper sees the new
    // view itself), and a compaction prepared from the old one never will.
    const loop = this.#loops.get(sessionId)?.loop;
    loop?.reset();
    const cost = loop?.drop("a compaction replaced the context it was prepared from") ?? null;
    if (cost !== null) this.#info(describeBackgroundEvent({ type: "dropped", cost }));
    return {
      ok: true,
      compacted: true,
      result: { summary: record.summary, tokensBefore: result.tokensBefore, tokensAfter, details: plan.compaction.details },
    };
  }

  /** Records a compaction prepared in the background (its snapshot still starts the view, `tokens` now) as the session's. */
  async #putPrepared(sessionId: string, compactor: Compactor<PiMessage>, loop: HostLoop<PiMessage>, preparation: Preparation<PiMessage>, tokens: number, agent: string | undefined): Promise<CompactResult> {
    loop.applied(preparation);
    const result = preparation.result as CompactionResult<PiMessage>;
    const appended = Math.max(0, Math.round(tokens - preparation.tokens));
    const saved = await this.#save(sessionId, compactor, result, preparation.snapshot as unknown as AgentMessage[], agent, appended);
    if (saved.compacted) {
      this.#info(`compaction: session ${sessionId}: put the compaction prepared in the background ${(preparation.age(loop.now()) / 1000).toFixed(1)} s ago in place, ${result.tokensBefore} -> ${saved.result?.tokensAfter} tokens, with the messages appended since after it.`);
    }
    return saved;
  }

  /**
   * The view as the loop reads it: its size in the provider's measure (the budget's: our count at
   * `ratio`, calibrated on OpenClaw's whole transcript), and each message's anchor as its key.
   */
  #held(compactor: Compactor<PiMessage>, view: readonly AgentMessage[], ratio: number): HeldContext<PiMessage> {
    const keys = view.map((message) => {
      const anchor = anchorOf(message);
      return `${anchor.role}\u0000${anchor.timestamp}\u0000${anchor.digest}`;
    });
    return { tokens: Math.ceil(countTokens(compactor, view) * ratio), messages: view as unknown as PiMessage[], keys };
  }

  /**
   * After a turn, and at `assemble`: core's `backgroundCheck` over the session's view (start
   * preparing past the prepare mark, put a ready one in place past the threshold or with the cache
   * cold, wait only when the view cannot be sent otherwise). Returns what was put in place, or null.
   */
  async #backgroundCheck(
    loop: HostLoop<PiMessage>,
    compactor: Compactor<PiMessage>,
    sessionId: string,
    sessionKey: string,
    messages: readonly AgentMessage[],
    tokenBudget: number,
  ): Promise<CompactResult | null> {
    const agent = this.#agentOf(sessionKey);
    const view = this.#applied(messages, await this.#deps.store.compaction(sessionId), sessionId);
    const ratio = budgetRatio(compactor, messages);
    const held = this.#held(compactor, view, ratio);
    const put = await backgroundCheck<PiMessage, CompactResult>(loop, {
      context: () => held,
      run: (snapshot, { targetTokens, signal }) =>
        this.#run(compactor, snapshot as unknown as AgentMessage[], { trigger: "auto", tokenBudget, signal, ...(targetTokens === undefined ? {} : { targetTokens }), ...(agent === undefined ? {} : { agent }) }),
      apply: (preparation) => this.#putPrepared(sessionId, compactor, loop, preparation, held.tokens, agent),
      compactNow: (summarizer) => this.#compactSession({ sessionId, sessionKey, tokenBudget }, summarizer),
      report: (event) => this.#info(describeBackgroundEvent(event)),
    });
    if (put === null) return null;
    // As after any automatic compaction: the loop waits when it could not bring the view under the threshold.
    const after = this.#applied(messages, await this.#deps.store.compaction(sessionId), sessionId);
    const growth = loop.settle(countTokens(compactor, after) * ratio, after as unknown as PiMessage[]);
    if (!put.ok) {
      const wait = growth === null ? "" : ` The next one after a turn waits until the context has grown by ${growth} tokens (a quarter of the budget).`;
      this.#warnOnce(`compaction: the compaction after a turn failed: ${put.reason ?? "no reason given"}${wait}`);
    }
    return put;
  }

  async dispose(): Promise<void> {
    this.#seen.clear();
    this.#budgets.clear();
    this.#models.clear();
    // Loops shared with the plugin's other engines go on (a later run puts their preparations in
    // place); the engine's own have no one to put a preparation in place any more.
    if (this.#deps.loops !== undefined) return;
    const preparations = [...this.#loops.values()].map(({ loop }) => {
      const preparation = loop.prepared;
      loop.drop("the engine was disposed");
      return preparation?.done;
    });
    await Promise.all(preparations);
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
    const { background, waitMs } = this.#deps.options;
    const loop = new HostLoop(compactor, { contextWindow: tokenBudget, reserveTokens: 0, host: "@compaction/openclaw", background, waitMs });
    // A compaction prepared by the session's former loop (another compactor or model) has no one to put it in place.
    const cost = known?.loop.drop("the session's model or config changed") ?? null;
    if (cost !== null) this.#info(describeBackgroundEvent({ type: "dropped", cost }));
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

  #info(message: string | null): void {
    if (message !== null) this.#deps.info?.(message);
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
