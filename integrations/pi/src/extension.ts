/**
 * The pi extension: `session_before_compact` runs the agent's preset from `.compactionrc` and
 * returns our compaction; `context` sends the request of the session's `HostLoop` (old tool
 * outputs pruned by layered's rules, then what is still over the budget shrunk to head and tail,
 * the request kept; the session file keeps the full text), and reports its
 * COMPACTION_CONTEXT_TRIMMED / COMPACTION_CONTEXT_OVERFLOW as warnings; when the preset has
 * recall, the session's index is opened and `memory_search` registered. Everything is set up
 * on `session_start`, or on first use by hosts that never emit it (a bare SDK session). When to
 * compact stays pi's decision (its threshold), so the loop's wait after a compaction is not used
 * here, and its threshold is pi's: with background compaction (`background`, on with a model
 * summarizer) `turn_end` and `agent_end` prepare the compaction past the loop's prepare mark and
 * `session_before_compact` returns it at once (background-compaction.ts); `session_compact` drops
 * one that the compaction just written made stale.
 */
import { fileURLToPath } from "node:url";
import { type Compactor, configWarnings, HostLoop, type PiMessage, type ResolvedConfig } from "@compaction/core";
import { sessionAutoCompact, type SessionEntry } from "@compaction/transcript";
import { PI_DEFAULT_RESERVE_TOKENS, prepareAfterTurn, type PreparedOutcome, reportBackground, takePrepared } from "./background-compaction.js";
import type { BranchCompactEvent } from "./compact-branch.js";
import type { ContextEvent, ExtensionAPI, ExtensionContext, ExtensionFactory } from "./pi-types.js";
import { beforeCompact } from "./before-compact.js";
import { CompactorCache } from "./compactor-cache.js";
import { ensureRequestPruning } from "@compaction/plugin-layered";
import { explain, hintOf } from "./explain.js";
import { type PiCompactionOptions, resolvePiCompactionOptions, type ResolvedPiCompactionOptions } from "./options.js";
import { RecallLink, type RecallStatus } from "./recall-link.js";
import { branchRecordedCalibration } from "./recorded-calibration.js";
import { projectTrust } from "./project-trust.js";
import { claimRuntime } from "./single-instance.js";

/** This copy of the extension (its package folder), as named when another copy is already loaded. */
const MODULE_FILE = fileURLToPath(new URL("..", import.meta.url));

/**
 * The extension factory, for `createAgentSession` (`DefaultResourceLoader({ extensionFactories })`)
 * or a file of your own: `export default compactionExtension({ agent: "coder" })`. Options left
 * out come from the environment (`COMPACTION_AGENT`, `COMPACTION_PRESET`, ...); invalid options
 * throw COMPACTION_INPUT_INVALID when pi loads the extension.
 */
export function compactionExtension(options: PiCompactionOptions = {}): ExtensionFactory {
  return (pi: ExtensionAPI) => {
    const settings = resolvePiCompactionOptions(options);
    claimRuntime(pi, MODULE_FILE);
    const host = new PiCompactionHost(pi, settings);
    const prepare = async (_event: unknown, ctx: ExtensionContext): Promise<void> => {
      await host.prepare(ctx);
    };
    pi.on("session_start", prepare);
    // Hosts that never emit session_start (a bare SDK session) still prompt: prepare before the first model call.
    pi.on("before_agent_start", prepare);
    pi.on("session_before_compact", (event, ctx) => host.beforeCompact(event, ctx));
    pi.on("session_compact", (_event, ctx) => host.compacted(ctx));
    pi.on("context", (event, ctx) => host.context(event, ctx));
    pi.on("turn_end", (_event, ctx) => host.afterTurn(ctx));
    pi.on("agent_end", (_event, ctx) => host.afterTurn(ctx));
    pi.on("session_shutdown", () => host.shutdown());
  };
}

/** The extension's state for one pi runtime: compactors and the recall link. */
class PiCompactionHost {
  readonly #settings: ResolvedPiCompactionOptions;
  readonly #compactors = new CompactorCache();
  /** Each session's host loop and the compactor it was made for (see `#loopFor`). */
  readonly #loops = new Map<string, { readonly compactor: Compactor<PiMessage>; readonly loop: HostLoop<PiMessage> }>();
  readonly #recall: RecallLink;
  /** Problems already shown, so a broken config is reported once, not before every model call. */
  readonly #reported = new Set<string>();
  /** pi's reserve for the reply (`compaction.reserveTokens`), as its last compaction event said: its threshold is the window less it. */
  #piReserve = PI_DEFAULT_RESERVE_TOKENS;

  constructor(pi: ExtensionAPI, settings: ResolvedPiCompactionOptions) {
    this.#settings = settings;
    this.#recall = new RecallLink(pi);
  }

  /** Loads the compactor and connects recall (once; later calls are cheap); problems are reported, not thrown. */
  async prepare(ctx: ExtensionContext): Promise<Compactor<PiMessage> | undefined> {
    let compactor: Compactor<PiMessage>;
    try {
      compactor = await this.#compactorFor(ctx);
    } catch (error) {
      this.#reportOnce("warning", withHint(`compaction: ${explain(error)}`, error), ctx);
      return undefined;
    }
    try {
      await this.#recallFor(compactor, ctx);
    } catch (error) {
      this.#reportOnce("warning", `compaction: the recall index could not be opened: ${explain(error)}. memory_search is not available yet.`, ctx);
    }
    return compactor;
  }

  async beforeCompact(event: Parameters<typeof beforeCompact>[0], ctx: ExtensionContext) {
    try {
      return await beforeCompact(event, ctx, {
        settings: this.#settings,
        compactorFor: (c) => this.#compactorFor(c),
        recall: (compactor, c) => this.#recallFor(compactor, c),
        prepared: (e, c, compactor, contextWindow, trigger) => this.#prepared(e, c, compactor, contextWindow, trigger),
      });
    } finally {
      // pi's reserve, as its event says, for the threshold the next preparations lead (after this
      // compaction: a loop made for another threshold now would drop the preparation it takes).
      const reserve = event.preparation.settings.reserveTokens;
      if (Number.isInteger(reserve) && reserve >= 0) this.#piReserve = reserve;
    }
  }

  /**
   * At the end of a turn (and of the agent's run): with background compaction, prepares the
   * compaction of the branch past the prepare mark (see background-compaction.ts). Never throws,
   * and never makes pi wait: the compaction runs beside the agent.
   */
  async afterTurn(ctx: ExtensionContext): Promise<void> {
    const compactor = await this.prepare(ctx);
    if (compactor === undefined) return;
    const contextWindow = ctx.model?.contextWindow ?? (compactor.config as ResolvedConfig | undefined)?.contextWindow;
    if (contextWindow === undefined || contextWindow <= 0) return;
    try {
      const loop = this.#loopFor(compactor, ctx, contextWindow);
      if (!loop.background) return;
      const branch = ctx.sessionManager.getBranch();
      // `compaction autocompact off`: pi's next compaction is a /compact of the user's, with no need to prepare it.
      if (sessionAutoCompact(branch as SessionEntry[]) === false) return;
      const agent = this.#settings.agent(ctx);
      prepareAfterTurn(loop, branch, { compactor, contextWindow, ...(agent === undefined ? {} : { agent }), report: (level, message) => this.#settings.report(level, message, ctx) });
    } catch (error) {
      this.#reportOnce("warning", `compaction: could not prepare the next compaction in the background: ${explain(error)}. pi's next compaction runs when pi asks for it.`, ctx);
    }
  }

  /** After a compaction was written: one prepared before it was made from the context it replaced. */
  compacted(ctx: ExtensionContext): void {
    const loop = this.#loops.get(sessionOf(ctx))?.loop;
    const cost = loop?.drop("a compaction was written since, replacing the context it was prepared from") ?? null;
    if (cost !== null) reportBackground({ type: "dropped", cost }, (level, message) => this.#settings.report(level, message, ctx));
  }

  /** The session's preparation for pi's compaction (see background-compaction.ts), or compact now when there is none. */
  async #prepared(event: BranchCompactEvent, ctx: ExtensionContext, compactor: Compactor<PiMessage>, contextWindow: number, trigger: "auto" | "manual"): Promise<PreparedOutcome> {
    if (contextWindow <= 0) return { kind: "compact" };
    const loop = this.#loopFor(compactor, ctx, contextWindow);
    return takePrepared(loop, event, trigger, (level, message) => this.#settings.report(level, message, ctx));
  }

  /**
   * Shapes what is sent: the request of the session's loop (`HostLoop.request`), with `pruneContext`
   * (the default) the preset's send-time shaping, and old tool outputs pruned by layered's rules
   * whatever the preset (`ensureRequestPruning`); then what is still over the budget (the window
   * less the reply's reserve and the system prompt) is shrunk, and older turns left out only at the
   * end. Prefix-stable, per session: between two compactions a message shrunk once goes out in the
   * same form, so each request differs from the previous one only at its end and the provider's
   * prompt cache holds. A request that leaves out older messages (COMPACTION_CONTEXT_TRIMMED, once
   * per loss) or cannot fit (COMPACTION_CONTEXT_OVERFLOW) is a warning. Sends the messages
   * unchanged on any other problem.
   */
  async context(event: ContextEvent, ctx: ExtensionContext): Promise<{ messages: ContextEvent["messages"] } | undefined> {
    const compactor = await this.prepare(ctx);
    if (compactor === undefined) return undefined;
    const contextWindow = ctx.model?.contextWindow ?? (compactor.config as ResolvedConfig | undefined)?.contextWindow;
    if (contextWindow === undefined || contextWindow <= 0) return undefined;
    const pruneContext = this.#settings.pruneContext;
    try {
      if (pruneContext) ensureRequestPruning(compactor);
      const messages = event.messages as PiMessage[];
      const recorded = branchRecordedCalibration(ctx);
      const systemPrompt = ctx.getSystemPrompt();
      const loop = this.#loopFor(compactor, ctx, contextWindow);
      // The budget as the shaping's own default sizes it: the window less the reserve, at the
      // calibrated ratio (the branch's recorded calibration where the messages hold no figures),
      // less the system prompt sent beside the messages.
      const ratio = compactor.tokens.budgetRatio(messages, recorded);
      const budget = Math.max(1, loop.budget(ratio) - (systemPrompt ? compactor.tokens.counter.count(systemPrompt) : 0));
      const { request, problem } = loop.request(messages, budget, {
        systemPrompt,
        plugins: pruneContext,
        ...(recorded === undefined ? {} : { recordedCalibration: recorded }),
      });
      for (const warning of request.warnings) this.#reportOnce("warning", `compaction: ${warning} The rest of the request was shaped as usual.`, ctx);
      if (problem !== null) this.#reportOnce("warning", `compaction: ${problem.message} ${problem.hint ?? ""} [${problem.code}]`, ctx);
      return request.messages === messages ? undefined : { messages: request.messages as ContextEvent["messages"] };
    } catch (error) {
      this.#reportOnce("warning", `compaction: could not shape the request to the context window: ${explain(error)}. The messages were sent as they are.`, ctx);
      return undefined;
    }
  }

  /**
   * The loop of the session in `ctx` (one per session file), made for its compactor, the window of
   * pi's model and pi's threshold (a new one when any changes; a compaction being prepared by the
   * old one is dropped): the reply's reserve is the config's, else the window's own, and one the
   * window cannot hold throws here; the threshold is pi's (its window less its reserve), which the
   * prepare mark leads. pi decides when to compact, so a cold prompt cache compacts nothing here.
   */
  #loopFor(compactor: Compactor<PiMessage>, ctx: ExtensionContext, contextWindow: number): HostLoop<PiMessage> {
    const session = sessionOf(ctx);
    const known = this.#loops.get(session);
    const threshold = Math.max(1, contextWindow - this.#piReserve);
    if (known !== undefined && known.compactor === compactor && known.loop.contextWindow === contextWindow && known.loop.threshold === threshold) return known.loop;
    const cost = known?.loop.drop("the session's model, window or config changed") ?? null;
    if (cost !== null) reportBackground({ type: "dropped", cost }, (level, message) => this.#settings.report(level, message, ctx));
    const { background, waitMs } = this.#settings;
    const loop = new HostLoop(compactor, { contextWindow, threshold, background, waitMs, cacheTtlMs: null, host: "@compaction/pi" });
    this.#loops.set(session, { compactor, loop });
    return loop;
  }

  async shutdown(): Promise<void> {
    // A compaction being prepared has no one left to return it to.
    const preparations = [...this.#loops.values()].map(({ loop }) => {
      const preparation = loop.prepared;
      loop.drop("pi shut the session down");
      return preparation?.done;
    });
    await Promise.all(preparations);
    this.#loops.clear();
    await this.#recall.close();
    await this.#compactors.dispose();
  }

  /** The compactor for pi's context; what project trust kept from loading is reported once per compactor. */
  async #compactorFor(ctx: ExtensionContext): Promise<Compactor<PiMessage>> {
    const settings = this.#settings;
    const cwd = settings.cwd ?? ctx.cwd;
    const trust =
      settings.trustProject === "pi" ? projectTrust(ctx, cwd) : { trusted: settings.trustProject, because: `the trustProject option is ${settings.trustProject}` };
    const compactor = await this.#compactors.get({ cwd, agent: settings.agent(ctx), preset: settings.preset, trusted: trust.trusted });
    const warnings = configWarnings(compactor);
    for (const warning of warnings) {
      this.#reportOnce("warning", `compaction: ${warning.message} (${trust.because}) ${warning.hint} [${warning.code}]`, ctx);
    }
    return compactor;
  }

  async #recallFor(compactor: Compactor<PiMessage>, ctx: ExtensionContext): Promise<RecallStatus> {
    return this.#recall.ensure(compactor, ctx.sessionManager);
  }

  #reportOnce(level: "warning" | "error", message: string, ctx: ExtensionContext): void {
    if (this.#reported.has(message)) return;
    this.#reported.add(message);
    this.#settings.report(level, message, ctx);
  }
}

/** The session `ctx` is about: its file, or one name for pi's in-memory session. */
function sessionOf(ctx: ExtensionContext): string {
  return ctx.sessionManager.getSessionFile() ?? "(in memory)";
}

function withHint(message: string, error: unknown): string {
  const hint = hintOf(error);
  return hint === "" ? message : `${message} ${hint}`;
}
