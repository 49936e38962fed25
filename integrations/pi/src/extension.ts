/**
 * The pi extension: `session_before_compact` runs the agent's preset from `.compactionrc` and
 * returns our compaction; `context` shapes what is sent with the compactor's `shapeRequest` (old
 * tool outputs pruned by layered's rules, then what is still over the window shrunk to head and
 * tail, the request kept; the session file keeps the full text); when the preset has
 * recall, the session's index is opened and `memory_search` registered. Everything is set up
 * on `session_start`, or on first use by hosts that never emit it (a bare SDK session).
 */
import { fileURLToPath } from "node:url";
import { type Compactor, configWarnings, type PiMessage, type RequestShaper, type ResolvedConfig } from "@compaction/core";
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
  /** Each session's request shaper, by compactor (see `#shaperFor`). */
  readonly #shapers = new WeakMap<Compactor<PiMessage>, Map<string, RequestShaper<PiMessage>>>();
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
   * Shapes what is sent (`compactor.shapeRequest`): with `pruneContext` (the default) the preset's
   * send-time shaping runs, and old tool outputs are pruned by layered's rules whatever the preset
   * (`ensureRequestPruning`); then what is still over the window is shrunk. Prefix-stable, per
   * session (`Compactor.createRequestShaper`): between two compactions a message shrunk once goes
   * out in the same form, so each request differs from the previous one only at its end and the
   * provider's prompt cache holds. Sends the messages unchanged on any problem.
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
      const shaped = this.#shaperFor(compactor, ctx).shape(messages, {
        contextWindow,
        systemPrompt: ctx.getSystemPrompt(),
        plugins: pruneContext,
        ...(recorded === undefined ? {} : { recordedCalibration: recorded }),
      });
      for (const warning of shaped.warnings) this.#reportOnce("warning", `compaction: ${warning} The rest of the request was shaped as usual.`, ctx);
      return shaped.messages === messages ? undefined : { messages: shaped.messages as ContextEvent["messages"] };
    } catch (error) {
      this.#reportOnce("warning", `compaction: could not shape the request to the context window: ${explain(error)}. The messages were sent as they are.`, ctx);
      return undefined;
    }
  }

  /** The request shaper of the session in `ctx` (one per session file and compactor: a compactor serves many sessions). */
  #shaperFor(compactor: Compactor<PiMessage>, ctx: ExtensionContext): RequestShaper<PiMessage> {
    let shapers = this.#shapers.get(compactor);
    if (shapers === undefined) {
      shapers = new Map();
      this.#shapers.set(compactor, shapers);
    }
    const session = ctx.sessionManager.getSessionFile() ?? "(in memory)";
    let shaper = shapers.get(session);
    if (shaper === undefined) {
      shaper = compactor.createRequestShaper();
      shapers.set(session, shaper);
    }
    return shaper;
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
