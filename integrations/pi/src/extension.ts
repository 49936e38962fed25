/**
 * The pi extension: `session_before_compact` runs the agent's preset from `.compactionrc` and
 * returns our compaction; `context` sends the request of the session's `HostLoop` (old tool
 * outputs pruned by layered's rules, then what is still over the budget shrunk to head and tail,
 * the request kept; the session file keeps the full text), and reports its
 * COMPACTION_CONTEXT_TRIMMED / COMPACTION_CONTEXT_OVERFLOW as warnings; when the preset has
 * recall, the session's index is opened and `memory_search` registered. Everything is set up
 * on `session_start`, or on first use by hosts that never emit it (a bare SDK session). When to
 * compact stays pi's decision (its threshold), so the loop's trigger and wait are not used here.
 */
import { fileURLToPath } from "node:url";
import { type Compactor, configWarnings, HostLoop, type PiMessage, type ResolvedConfig } from "@compaction/core";
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
    pi.on("context", (event, ctx) => host.context(event, ctx));
    pi.on("session_shutdown", () => host.shutdown());
  };
}

/** The extension's state for one pi runtime: compactors and the recall link. */
class PiCompactionHost {
  readonly #settings: ResolvedPiCompactionOptions;
  readonly #compactors = new CompactorCache();
  /** Each session's host loop, by compactor (see `#loopFor`). */
  readonly #loops = new WeakMap<Compactor<PiMessage>, Map<string, HostLoop<PiMessage>>>();
  readonly #recall: RecallLink;
  /** Problems already shown, so a broken config is reported once, not before every model call. */
  readonly #reported = new Set<string>();

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

  beforeCompact(event: Parameters<typeof beforeCompact>[0], ctx: ExtensionContext) {
    return beforeCompact(event, ctx, {
      settings: this.#settings,
      compactorFor: (c) => this.#compactorFor(c),
      recall: (compactor, c) => this.#recallFor(compactor, c),
    });
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
   * The loop of the session in `ctx` (one per session file and compactor: a compactor serves many
   * sessions), made for the window of pi's model (a new one when it changes): the reply's reserve
   * is the config's, else the window's own; one the window cannot hold throws here.
   */
  #loopFor(compactor: Compactor<PiMessage>, ctx: ExtensionContext, contextWindow: number): HostLoop<PiMessage> {
    let loops = this.#loops.get(compactor);
    if (loops === undefined) {
      loops = new Map();
      this.#loops.set(compactor, loops);
    }
    const session = ctx.sessionManager.getSessionFile() ?? "(in memory)";
    let loop = loops.get(session);
    if (loop === undefined || loop.contextWindow !== contextWindow) {
      loop = new HostLoop(compactor, { contextWindow, host: "@compaction/pi" });
      loops.set(session, loop);
    }
    return loop;
  }

  async shutdown(): Promise<void> {
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

function withHint(message: string, error: unknown): string {
  const hint = hintOf(error);
  return hint === "" ? message : `${message} ${hint}`;
}
