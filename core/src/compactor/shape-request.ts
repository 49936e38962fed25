/**
 * Send-time shaping: what a host sends to the model, built from the context it holds, without
 * changing that context (its transcript keeps the full text). Hosts that record a compaction only
 * as "summary + unchanged suffix" (pi session files: the CLI, the context manager on a file, the
 * pi extension, OpenClaw) can apply a strategy's in-place changes nowhere else.
 *
 * Two steps, in this order:
 * 1. the `shapeRequest` hook: each plugin may replace messages in what is sent (layered prunes old
 *    tool outputs) and passes the list on (a waterfall). A tap must be a pure function of the
 *    messages and the shaping facts: the same input gives the same request, so the provider's
 *    prompt cache stays warm. A tap that throws or returns something other than an array is
 *    skipped (its change is not applied) and named in `warnings`: a plugin's bug never blocks a send.
 * 2. the core's shrinking (`shrinkToBudget`) of whatever is still over the budget.
 */
import type { MessageAdapter, MessageFacts } from "../messages/adapter.js";
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import { describeValue } from "../messages/message-fields.js";
import { type ShrinkResult, shrinkToBudget } from "../shrink/shrink-to-budget.js";
import type { RecordedCalibration } from "../tokens/calibration.js";
import { countedBudget, type MessageTokenCounter } from "../tokens/message-tokens.js";
import { usableWindow } from "./usable-window.js";
import { cacheBreakpoints } from "./cache-breakpoints.js";

/** What a host tells the compactor about the request it is about to send. */
export interface ShapeRequestInput {
  /** The model's context window, in tokens. Default: the compactor's `contextWindow`. */
  readonly contextWindow?: number;
  /** The system prompt sent beside the messages (not one of them): it takes room from them. */
  readonly systemPrompt?: string;
  /**
   * The tokens kept free for the reply, when the host holds its own (the context manager's
   * `reserveTokens` option). Default: the compactor's for this window (`Compactor.reserveFor`).
   */
  readonly reserveTokens?: number;
  /**
   * Most tokens the messages may hold, by our count. Default: the window less the reserve
   * (`reserveTokens`), as our count at the provider's calibrated ratio for these messages
   * (`MessageTokenCounter.budgetRatio`, `countedBudget`), less the system prompt (our count).
   */
  readonly budget?: number;
  /** Run the plugins' `shapeRequest` taps (default true); the core's shrinking always runs. */
  readonly plugins?: boolean;
  /**
   * The calibration the context's newest compaction recorded (`CompactionEvent.calibration`,
   * `ContextAnchor.calibration`): it sizes the budget when the messages give none to learn from.
   */
  readonly recordedCalibration?: RecordedCalibration;
}

/** What each `shapeRequest` tap receives beside the messages. */
export interface RequestShaping<T> {
  readonly contextWindow: number;
  /**
   * The window shares apply to (`usableWindow`: the context window, or less when the reserve for
   * the reply takes over a tenth of it), as `CompactionRun.usableWindow`. Optional for a shaping
   * object built by hand; the context window stands then.
   */
  readonly usableWindow?: number;
  /** Most tokens the messages may hold (see ShapeRequestInput.budget). */
  readonly budget: number;
  /**
   * The tokens kept free for the reply (see ShapeRequestInput.reserveTokens). Optional for a
   * shaping object built by hand.
   */
  readonly reserveTokens?: number;
  /** Our count of the system prompt sent beside the messages (0 when none). */
  readonly systemPromptTokens: number;
  /**
   * The provider's tokens per token we count, calibrated on the messages' usage figures, at least
   * 1 (`MessageTokenCounter.budgetRatio`; 1 with none): our count times it is the size of the
   * messages as the provider counts them, and the default budget is sized with it. Learned from
   * the spans between figures, so a request pruned when sent does not move it, and the same
   * messages give the same value.
   */
  readonly providerRatio: number;
  readonly adapter: MessageAdapter<T>;
  factsOf(message: T): MessageFacts;
  tokensOf(message: T): number;
}

/** The request to send. */
export interface ShapedRequest<T> extends ShrinkResult<T> {
  /** The budget the messages were shaped to. */
  readonly budget: number;
  /** Plugins whose `shapeRequest` tap changed what is sent, in the order they ran. */
  readonly shapedBy: readonly string[];
  /** Taps that failed and were skipped, one sentence each (`[plugin] ...`). */
  readonly warnings: readonly string[];
  /**
   * Where the stable prefix ends, as indices into `messages` (`cacheBreakpoints`): after the
   * summary or eviction note, after the last message unchanged since the previous request (a
   * `RequestShaper` knows it), and after the newest message. A host whose provider caches only at
   * marked places applies them with `markCacheBreakpoints` (Anthropic's `cache_control`).
   */
  readonly cacheBreakpoints: readonly number[];
}

/** What a compactor lends the shaping: its hook, adapter, counter and reserve. */
export interface ShapingEngine<T> {
  readonly adapter: MessageAdapter<T>;
  readonly tokens: MessageTokenCounter<T>;
  readonly contextWindow: number | undefined;
  /** The reply's reserve at a window (`Compactor.reserveFor`). */
  reserveFor(contextWindow: number): number;
  /** Runs the hook's taps (already wrapped by `guardShapingTap`). */
  runTaps(messages: readonly T[], shaping: RequestShaping<T>): readonly T[];
  readonly recallTool: string | undefined;
}

/** Per call: which taps changed the request and which failed (filled by the tap wrappers). */
const TRACES = new WeakMap<object, { shapedBy: string[]; warnings: string[] }>();

/** The messages to send for `messages` (see the file's doc comment). Deterministic. */
export function shapeRequest<T>(engine: ShapingEngine<T>, messages: readonly T[], input: ShapeRequestInput = {}): ShapedRequest<T> {
  const { shaping, shaped, trace } = runShapingTaps(engine, messages, input);
  const shrunk = shrinkToBudget(shaped, engine.tokens, { budget: shaping.budget, recallTool: engine.recallTool, dropOlder: true });
  const breakpoints = cacheBreakpoints(shrunk.messages.map((m) => engine.tokens.facts.of(m)));
  return { ...shrunk, budget: shaping.budget, shapedBy: trace.shapedBy, warnings: trace.warnings, cacheBreakpoints: breakpoints };
}

/** Step 1 of the shaping: the shaping facts, and the messages after the plugins' taps, with who changed them. */
export function runShapingTaps<T>(
  engine: ShapingEngine<T>,
  messages: readonly T[],
  input: ShapeRequestInput,
): { shaping: RequestShaping<T>; shaped: readonly T[]; trace: { shapedBy: string[]; warnings: string[] } } {
  const contextWindow = input.contextWindow ?? engine.contextWindow;
  if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `shapeRequest() needs a positive contextWindow; found ${String(contextWindow)}.`, {
      hint: "Pass contextWindow to shapeRequest() or to new Compactor(), or set it in .compactionrc.",
    });
  }
  const systemPromptTokens = input.systemPrompt ? engine.tokens.counter.count(input.systemPrompt) : 0;
  const providerRatio = engine.tokens.budgetRatio(messages, input.recordedCalibration);
  const reserve = input.reserveTokens ?? engine.reserveFor(contextWindow);
  const budget = Math.max(1, input.budget ?? countedBudget(contextWindow - reserve, providerRatio) - systemPromptTokens);
  const shaping: RequestShaping<T> = {
    contextWindow,
    usableWindow: usableWindow(contextWindow, Math.min(reserve, contextWindow - 1)),
    budget,
    reserveTokens: reserve,
    systemPromptTokens,
    providerRatio,
    adapter: engine.adapter,
    factsOf: (message) => engine.tokens.facts.of(message),
    tokensOf: (message) => engine.tokens.count(message),
  };
  const trace = { shapedBy: [] as string[], warnings: [] as string[] };
  TRACES.set(shaping, trace);
  const shaped = input.plugins === false ? messages : engine.runTaps(messages, shaping);
  return { shaping, shaped, trace };
}

/** A registered tap, as tapable hands it to a `register` interceptor. */
type RegisteredTap = { name: string; type: "sync" | "async" | "promise"; fn: Function };

/**
 * Wraps a `shapeRequest` tap: a throw or a value that is not an array skips the tap (the list
 * passes on unchanged) with a warning naming the plugin; a changed list is credited to it.
 */
export function guardShapingTap<TapT extends RegisteredTap>(tap: TapT): TapT {
  const fn = tap.fn as (messages: readonly unknown[], shaping: object) => unknown;
  return {
    ...tap,
    fn: (messages: readonly unknown[], shaping: object) => {
      const trace = TRACES.get(shaping);
      let value: unknown;
      try {
        value = fn(messages, shaping);
      } catch (error) {
        trace?.warnings.push(`[${tap.name}] shapeRequest failed: ${describeError(error)}. Its change to the request was not applied.`);
        return messages;
      }
      if (value === undefined) return messages;
      if (!Array.isArray(value)) {
        trace?.warnings.push(`[${tap.name}] shapeRequest returned ${describeValue(value)}; expected the messages to send (an array). Its change was not applied.`);
        return messages;
      }
      if (value !== messages && (value.length !== messages.length || value.some((m, i) => m !== messages[i]))) trace?.shapedBy.push(tap.name);
      return value;
    },
  };
}
