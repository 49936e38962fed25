/**
 * The compactor's hooks, and how each tap is bound to its plugin: every tap receives the run as
 * its own plugin's view (`CompactionRun`, with the plugin's name bound, as Rollup gives each
 * plugin its own context), and the run knows which plugin, in which hook, is running, to blame it
 * for an error.
 */
import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncWaterfallHook } from "tapable";
import { CompactionError, ErrorCodes } from "../errors.js";
import { describeValue } from "../messages/message-fields.js";
import type { Cut } from "../cut/cut.js";
import type { CompactionResult } from "./result.js";
import { CompactionRun, type SummaryDraft } from "./run.js";
import type { RunState } from "./run-state.js";
import { guardShapingTap, type RequestShaping } from "./shape-request.js";

export function createHooks<T>() {
  const hooks = Object.freeze({
    /** Prepare or transform the working set (e.g. prune old tool outputs), or cancel. */
    beforeCompact: new AsyncSeriesHook<[CompactionRun<T>]>(["run"]),
    /** The first plugin that returns a cut wins. */
    selectCut: new AsyncSeriesBailHook<[CompactionRun<T>], Cut | undefined | null>(["run"]),
    /** Each plugin adds to or rewrites the summary draft and passes it on. */
    summarize: new AsyncSeriesWaterfallHook<[SummaryDraft, CompactionRun<T>]>(["draft", "run"]),
    /** Persist the event, index for recall, warn. */
    afterCompact: new AsyncSeriesHook<[CompactionResult<T>, CompactionRun<T>]>(["result", "run"]),
    /**
     * Send time, not a run: each plugin may replace messages in what is sent (never in the
     * transcript) and passes the list on. Sync and pure: the same input gives the same request.
     */
    shapeRequest: new SyncWaterfallHook<[readonly T[], RequestShaping<T>]>(["messages", "shaping"]),
  });
  for (const [name, hook] of Object.entries(hooks)) hook.intercept({ register: (tap) => bindPluginView(tap, name) });
  hooks.summarize.intercept({ register: checkDraftReturned });
  hooks.shapeRequest.intercept({ register: guardShapingTap });
  return hooks;
}

export type CompactorHooks<T> = ReturnType<typeof createHooks<T>>;

/** A registered tap, as tapable hands it to a `register` interceptor. */
type RegisteredTap = { name: string; type: "sync" | "async" | "promise"; fn: Function };

/** Each run's views, one per plugin, so a plugin sees the same view in every tap of one run. */
const VIEWS = new WeakMap<RunState<any>, Map<string, CompactionRun<any>>>();
/** The run behind each view, for the compactor only (a plugin cannot get from its view to another's). */
const RUNS = new WeakMap<CompactionRun<any>, RunState<any>>();

/** `plugin`'s view of the run (the core's is `viewFor(run, "core")`, what the hooks are called with). */
export function viewFor<T>(run: RunState<T>, plugin: string): CompactionRun<T> {
  let views = VIEWS.get(run);
  if (views === undefined) VIEWS.set(run, (views = new Map()));
  let view = views.get(plugin) as CompactionRun<T> | undefined;
  if (view === undefined) {
    view = new CompactionRun(run, plugin);
    views.set(plugin, view);
    RUNS.set(view, run);
  }
  return view;
}

/**
 * Wraps every tap of `hook` so it receives the run as its own plugin's view (its warnings,
 * cancellation and changes carry its name), and so the run knows which plugin, in which hook, to
 * blame for an error (`run.running`, `run.runningHook`; in `selectCut`, also the plugin whose cut
 * won, as the last tap run).
 */
function bindPluginView<TapT extends RegisteredTap>(tap: TapT, hook: string): TapT {
  const fn = tap.fn as (...args: unknown[]) => unknown;
  const name = tap.name;
  return {
    ...tap,
    fn: (...args: unknown[]) =>
      fn(
        ...args.map((arg) => {
          const run = arg instanceof CompactionRun ? RUNS.get(arg) : undefined;
          if (run === undefined) return arg;
          run.running = name;
          run.runningHook = hook;
          return viewFor(run, name);
        }),
      ),
  };
}

/** Wraps each `summarize` tap so a malformed draft is blamed on the plugin that returned it. */
function checkDraftReturned<TapT extends RegisteredTap>(tap: TapT): TapT {
  return mapTapResult(tap, (value) => {
    if (value !== undefined) assertDraft(value, tap.name);
    return value;
  });
}

/** A tap whose result passes through `map`, whatever the tap's type. */
function mapTapResult<TapT extends RegisteredTap>(tap: TapT, map: (value: unknown) => unknown): TapT {
  const fn = tap.fn as (...args: unknown[]) => unknown;
  let wrapped: (...args: unknown[]) => unknown;
  if (tap.type === "promise") wrapped = (...args) => (fn(...args) as Promise<unknown>).then(map);
  else if (tap.type === "sync") wrapped = (...args) => map(fn(...args));
  else {
    wrapped = (...args) => {
      const callback = args.at(-1) as (error: unknown, value?: unknown) => void;
      return fn(...args.slice(0, -1), (error: unknown, value?: unknown) => {
        if (error) return callback(error);
        try {
          callback(null, map(value));
        } catch (invalid) {
          callback(invalid);
        }
      });
    };
  }
  return { ...tap, fn: wrapped };
}

const DRAFT_KINDS: ReadonlySet<unknown> = new Set(["summary", "note", "none"]);

function assertDraft(value: unknown, plugin: string): asserts value is SummaryDraft {
  const draft = value as Partial<SummaryDraft> | null;
  if (typeof draft !== "object" || draft === null || typeof draft.text !== "string" || !DRAFT_KINDS.has(draft.kind)) {
    const found =
      typeof draft !== "object" || draft === null
        ? describeValue(draft)
        : `{ text: ${describeValue(draft.text)}, kind: ${describeValue(draft.kind)} }`;
    throw new CompactionError(
      ErrorCodes.PLUGIN_FAILED,
      `Plugin '${plugin}' returned ${found} from summarize; expected a draft { text: string, kind: "summary" | "note" | "none" }.`,
      { plugin, hook: "summarize", hint: "Return { ...draft, text } to change the text, or undefined to pass the draft on unchanged." },
    );
  }
}
