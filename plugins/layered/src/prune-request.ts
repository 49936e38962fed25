/**
 * Layer 1 at send time, for every host: layered's `shapeRequest` tap replaces old tool outputs by
 * one-line markers in what is sent (never in the transcript). It uses the same thresholds as the
 * layer at compaction time (prune above `pruneThreshold` of the window when the tool outputs hold
 * more than `pruneMinToolTokens`; the newest `pruneProtectTokens` keep their outputs), with two
 * differences, both because it runs before every model call:
 * - The size is our count of the messages as given plus the system prompt at the calibrated
 *   ratio (`shaping.providerRatio`), not the provider's usage figure: that figure describes the
 *   request as sent, pruned, and would switch pruning off and on again on alternate calls. The
 *   calibrated ratio is learned from the spans between figures, so pruning does not move it, and
 *   the threshold is crossed where the core's budget (in the provider's measure) is near.
 * - It is a pure function of the messages, so the same context always gives the same request,
 *   and the pruned outputs change rarely, so the provider's prompt cache keeps working: of the
 *   outputs that could be pruned (oldest first), it prunes the longest run that ends where the
 *   savings, added up from the oldest, pass a multiple of `pruneMinSavings`. As the conversation
 *   grows, outputs leave the protected tail one by one, but what is pruned moves on only in steps
 *   of whole multiples of `pruneMinSavings`; the outputs already pruned stay pruned (the list of
 *   candidates only grows at its end).
 */
import { type CompactionPlugin, type Compactor, type RequestShaping, type ResolvedConfig, STAGE_PRUNE } from "@compaction/core";
import { resolveLayeredOptions } from "./layered.js";
import { shouldPrune } from "./layers.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";

export type RequestPruningOptions = Pick<LayeredOptions, "pruneThreshold" | "pruneMinToolTokens" | "pruneProtectTokens" | "pruneMinSavings">;

/** What pruning at send time did. */
export interface PrunedRequest<T> {
  /** The messages to send: `messages` itself when nothing was pruned, else a new array with pruned copies. */
  readonly messages: readonly T[];
  /** Indices of the pruned outputs, oldest first. */
  readonly prunedIndices: readonly number[];
  readonly tokensSaved: number;
  /** Our count of the messages given plus the system prompt, at the calibrated ratio, as a share of the window. */
  readonly ratio: number;
}

/** `messages` with old tool outputs pruned for sending (see the file's doc comment). Pure. */
export function pruneRequest<T>(messages: readonly T[], shaping: RequestShaping<T>, options: RequestPruningOptions): PrunedRequest<T> {
  let total = shaping.systemPromptTokens;
  let toolTokens = 0;
  for (const message of messages) {
    const tokens = shaping.tokensOf(message);
    total += tokens;
    if (shaping.factsOf(message).kind === "toolResult") toolTokens += tokens;
  }
  // A shaping object built by hand may lack the ratio: our count then stands.
  const providerRatio = Number.isFinite(shaping.providerRatio) && shaping.providerRatio > 0 ? shaping.providerRatio : 1;
  const ratio = (total * providerRatio) / (shaping.usableWindow ?? shaping.contextWindow);
  const none: PrunedRequest<T> = { messages, prunedIndices: [], tokensSaved: 0, ratio };
  if (!shouldPrune(ratio, toolTokens, options)) return none;
  const candidate = pruneToolOutputs(messages, {
    adapter: shaping.adapter,
    factsOf: (m) => shaping.factsOf(m),
    tokensOf: (m) => shaping.tokensOf(m),
    protectTokens: options.pruneProtectTokens,
  });
  const step = Math.max(1, options.pruneMinSavings);
  let saved = 0;
  let applied = 0;
  let appliedSaved = 0;
  candidate.prunedIndices.forEach((index, n) => {
    const before = Math.floor(saved / step);
    saved += shaping.tokensOf(messages[index] as T) - shaping.tokensOf(candidate.messages[index] as T);
    if (Math.floor(saved / step) > before) {
      applied = n + 1;
      appliedSaved = saved;
    }
  });
  if (applied === 0) return none;
  const pruned = candidate.prunedIndices.slice(0, applied);
  const replace = new Set(pruned);
  return {
    messages: messages.map((message, index) => (replace.has(index) ? (candidate.messages[index] as T) : message)),
    prunedIndices: pruned,
    tokensSaved: appliedSaved,
    ratio,
  };
}

/** The name of the plugin that adds only this send-time pruning (for presets without layered). */
export const REQUEST_PRUNING_PLUGIN = "layered-request-pruning";

/**
 * A plugin that adds only layered's send-time pruning (`shapeRequest`), nothing at compaction
 * time: for hosts that prune what they send whatever the preset (the pi extension's and
 * OpenClaw's `pruneContext`). `layered` itself taps the same function.
 */
export function requestPruning(options?: Partial<LayeredOptions>): CompactionPlugin {
  const resolved = resolveLayeredOptions(options);
  return {
    name: REQUEST_PRUNING_PLUGIN,
    options: resolved as unknown as Readonly<Record<string, unknown>>,
    apply(compactor) {
      compactor.hooks.shapeRequest.tap({ name: REQUEST_PRUNING_PLUGIN, stage: STAGE_PRUNE }, (messages: readonly unknown[], shaping: RequestShaping<unknown>) =>
        pruneRequest(messages, shaping, resolved).messages,
      );
    },
  };
}

/**
 * Makes sure `compactor` prunes old tool outputs in what is sent: a compactor whose preset has
 * `layered` already does; any other gets `requestPruning` with the config's `options.layered`
 * (defaults filled in). Idempotent.
 */
export function ensureRequestPruning<T>(compactor: Compactor<T>): void {
  if (compactor.plugins.some((plugin) => plugin.name === "layered" || plugin.name === REQUEST_PRUNING_PLUGIN)) return;
  const config = compactor.config as ResolvedConfig | undefined;
  compactor.use(requestPruning(config?.options["layered"] as Partial<LayeredOptions> | undefined));
}
