/**
 * The ways of keeping a context that a replay compares: a compactor run by the context manager
 * (every preset, and pi's own rule built as a compactor), and two peers reproduced from their
 * documentation: no compaction at all, and Anthropic's server-side tool-result clearing.
 */
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import type { Compactor, MessageAdapter } from "@compaction/core";
import type { ReplayHost, ReplayPolicy } from "./replay.js";

export interface ContextManagerPolicyOptions<T = unknown> {
  /** Whether the policy disposes of the compactor `create` gave when the replay ends (default true). */
  readonly ownsCompactor?: boolean;
  /**
   * Called with the context manager of each session opened, before anything is appended: where a
   * benchmark listens to its events (`compaction-end`, `warning`, `error`) to see what a host sees.
   */
  readonly onOpen?: (manager: ContextManager<T>) => void;
}

/**
 * A compactor run by an in-memory context manager, as a host runs it: appended messages, a
 * threshold check before each model call, and `requestMessages()` sent. `create` gives the
 * compactor for each session (the policy disposes of it unless `ownsCompactor` is false).
 */
export function contextManagerPolicy<T>(
  name: string,
  create: () => Promise<Compactor<T>>,
  contextWindow: number,
  options: ContextManagerPolicyOptions<T> = {},
): ReplayPolicy<T> {
  return {
    name,
    async open(): Promise<ReplayHost<T>> {
      const compactor = await create();
      const manager = await createContextManager<T>({ compactor, contextWindow });
      options.onOpen?.(manager);
      return {
        append: (messages) => manager.append(messages),
        async request() {
          await manager.check();
          return manager.requestMessages();
        },
        get compactions() {
          return manager.compactions;
        },
        async close() {
          await manager.dispose();
          if (options.ownsCompactor !== false) compactor.dispose();
        },
      };
    },
  };
}

/** The whole history, sent as it is, however large (a request past the window shows as the largest request). */
export function noCompactionPolicy<T>(name = "no compaction"): ReplayPolicy<T> {
  return {
    name,
    async open() {
      const held: T[] = [];
      return {
        async append(messages) {
          held.push(...messages);
        },
        request: async () => held,
        compactions: 0,
        async close() {},
      };
    },
  };
}

/** Anthropic's `clear_tool_uses_20250919` defaults (its context-editing documentation). */
export const CLEAR_TOOL_USES_DEFAULTS = Object.freeze({
  /** Input tokens past which it clears. */
  triggerTokens: 100_000,
  /** The newest tool uses whose results it keeps. */
  keepToolUses: 3,
  /** Least tokens one clearing must free (none by default). */
  clearAtLeastTokens: 0,
});

export interface ClearToolUsesOptions<T> {
  readonly adapter: MessageAdapter<T>;
  readonly tokensOf: (message: T) => number;
  readonly triggerTokens?: number;
  readonly keepToolUses?: number;
  readonly clearAtLeastTokens?: number;
  readonly placeholder?: string;
}

/**
 * Anthropic's server-side tool-result clearing, as its documentation describes it: the client
 * keeps and sends the whole history; when a request's input passes the trigger, the results of
 * every tool use but the newest `keepToolUses` are replaced with a placeholder before the model
 * sees it (only when that frees at least `clearAtLeastTokens`). A clearing counts as a compaction
 * when it clears more than the previous request did.
 */
export function clearToolUsesPolicy<T>(options: ClearToolUsesOptions<T>, name = "anthropic clear_tool_uses"): ReplayPolicy<T> {
  const trigger = options.triggerTokens ?? CLEAR_TOOL_USES_DEFAULTS.triggerTokens;
  const keep = options.keepToolUses ?? CLEAR_TOOL_USES_DEFAULTS.keepToolUses;
  const atLeast = options.clearAtLeastTokens ?? CLEAR_TOOL_USES_DEFAULTS.clearAtLeastTokens;
  const placeholder = options.placeholder ?? "[tool result cleared]";
  return {
    name,
    async open() {
      const held: T[] = [];
      const cleared = new WeakMap<object, T>();
      let clearings = 0;
      let lastCleared = 0;
      return {
        async append(messages) {
          held.push(...messages);
        },
        async request() {
          let total = 0;
          for (const message of held) total += options.tokensOf(message);
          if (total <= trigger) return held;
          const results: number[] = [];
          held.forEach((message, i) => {
            if (options.adapter.readFacts(message).kind === "toolResult") results.push(i);
          });
          const clear = new Set(results.slice(0, Math.max(0, results.length - keep)));
          let freed = 0;
          const sent = held.map((message, i) => {
            if (!clear.has(i)) return message;
            let replaced = cleared.get(message as object);
            if (replaced === undefined) {
              replaced = options.adapter.replaceToolOutput(message, placeholder);
              cleared.set(message as object, replaced);
            }
            freed += options.tokensOf(message) - options.tokensOf(replaced);
            return replaced;
          });
          if (freed < atLeast) return held;
          if (clear.size > lastCleared) clearings += 1;
          lastCleared = clear.size;
          return sent;
        },
        get compactions() {
          return clearings;
        },
        async close() {},
      };
    },
  };
}
