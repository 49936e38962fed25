/**
 * Layered's layer 1 on what a host sends (pi's `context` event, OpenClaw's context-engine
 * `assemble`): old tool outputs are replaced by one-line markers in the messages sent, never in
 * the session's transcript. It uses `layered`'s thresholds
 * (`options.layered` in `.compactionrc`): prune when the context is above `pruneThreshold` of
 * the window and the tool outputs hold more than `pruneMinToolTokens`; the newest
 * `pruneProtectTokens` keep their outputs.
 *
 * Two differences from the plugin, both because this runs before every model call:
 * - The size is our count of the unpruned messages plus the system prompt, not the provider's
 *   usage figure: that figure describes the request as sent, pruned, and would switch pruning
 *   off and on again on alternate calls.
 * - The set of pruned outputs only grows in steps of at least `pruneMinSavings` tokens, so the
 *   messages sent stay the same from call to call (the provider's prompt cache keeps working)
 *   instead of changing whenever one more output leaves the protected tail.
 */
import { type Compactor, type MessageFacts, type PiMessage, type ResolvedConfig, usableWindow } from "@compaction/core";
import { resolveLayeredOptions } from "./layered.js";
import { shouldPrune } from "./layers.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";
import { TokenMemo } from "./token-memo.js";

export interface PruneContextInput {
  /** The model's context window, in tokens. */
  readonly contextWindow: number;
  /** The system prompt sent with the messages (counted into the context size). */
  readonly systemPrompt?: string;
}

export interface PrunedContext {
  /** The messages to send: a new array with pruned copies; the input is not changed. */
  readonly messages: PiMessage[];
  /** Tool outputs replaced by markers. */
  readonly prunedCount: number;
  /** Tokens the markers save. */
  readonly tokensSaved: number;
  /** The context before pruning (messages and system prompt) as a share of the usable window (`usableWindow`). */
  readonly ratio: number;
}

/** The layered options in the compactor's config (`options.layered`), defaults filled in. */
export function layeredOptionsOf(compactor: Compactor<PiMessage>): LayeredOptions {
  const config = compactor.config as ResolvedConfig | undefined;
  return resolveLayeredOptions(config?.options["layered"] as Partial<LayeredOptions> | undefined);
}

export class ContextPruner {
  readonly #compactor: Compactor<PiMessage>;
  readonly #options: LayeredOptions;
  readonly #memo = new TokenMemo();
  /** Keys of the outputs pruned in the last call. */
  #pruned = new Set<string>();

  constructor(compactor: Compactor<PiMessage>, options: LayeredOptions = layeredOptionsOf(compactor)) {
    this.#compactor = compactor;
    this.#options = options;
  }

  /** The messages with old tool outputs pruned, or undefined when they are to be sent as they are. */
  prune(messages: readonly PiMessage[], input: PruneContextInput): PrunedContext | undefined {
    const compactor = this.#compactor;
    const factsOf = (message: PiMessage): MessageFacts => compactor.facts.of(message);
    const tokensOf = (message: PiMessage): number => this.#memo.message(factsOf(message), () => compactor.tokens.count(message));

    const systemPrompt = input.systemPrompt ?? "";
    let total = systemPrompt === "" ? 0 : this.#memo.text(systemPrompt, () => compactor.tokens.counter.count(systemPrompt));
    let toolTokens = 0;
    for (const message of messages) {
      const tokens = tokensOf(message);
      total += tokens;
      if (factsOf(message).kind === "toolResult") toolTokens += tokens;
    }
    // A share of the usable window, as at compaction time (the window, or less when the reserve
    // for the reply takes over a tenth of it).
    const ratio = total / usableWindow(input.contextWindow, Math.min(compactor.reserveFor(input.contextWindow), input.contextWindow - 1));
    if (!shouldPrune(ratio, toolTokens, this.#options)) return this.#none();

    const candidate = pruneToolOutputs(messages, {
      adapter: compactor.adapter,
      factsOf,
      tokensOf,
      protectTokens: this.#options.pruneProtectTokens,
    });
    const saved = (index: number): number => tokensOf(messages[index] as PiMessage) - tokensOf(candidate.messages[index] as PiMessage);
    const keyAt = (index: number): string => outputKey(factsOf(messages[index] as PiMessage));
    const again = candidate.prunedIndices.filter((index) => this.#pruned.has(keyAt(index)));
    const fresh = candidate.prunedIndices.filter((index) => !this.#pruned.has(keyAt(index)));
    const freshSaved = fresh.reduce((sum, index) => sum + saved(index), 0);
    const applied = freshSaved >= this.#options.pruneMinSavings ? candidate.prunedIndices : again;
    if (applied.length === 0) return this.#none();

    this.#pruned = new Set(applied.map(keyAt));
    const replace = new Set(applied);
    return {
      messages: messages.map((message, index) => (replace.has(index) ? (candidate.messages[index] as PiMessage) : message)),
      prunedCount: applied.length,
      tokensSaved: applied.reduce((sum, index) => sum + saved(index), 0),
      ratio,
    };
  }

  /** Forgets which outputs were pruned (after a compaction the context starts over). */
  reset(): void {
    this.#pruned = new Set();
  }

  #none(): undefined {
    this.#pruned = new Set();
    return undefined;
  }
}

/** Tells one tool output from another across pi's copies of the messages. */
function outputKey(facts: MessageFacts): string {
  return `${facts.toolResultIds.join(",")}@${facts.timestamp ?? ""}:${facts.toolName ?? ""}`;
}
