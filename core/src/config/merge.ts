import type { AgentConfig, PluginOptionsConfig } from "./types.js";

/** The keys an agent section may set: every top-level setting except `agents` and `$schema`. */
export const AGENT_KEYS = [
  "preset",
  "contextWindow",
  "reserveTokens",
  "adapter",
  "tokenizer",
  "summarizer",
  "autoCompact",
  "plugins",
  "options",
] as const satisfies ReadonlyArray<keyof AgentConfig>;

/** The keys `section` sets (present and not undefined), in schema order. */
export function keysSetBy(section: AgentConfig): Array<(typeof AGENT_KEYS)[number]> {
  return AGENT_KEYS.filter((key) => Object.hasOwn(section, key) && section[key] !== undefined);
}

/**
 * Applies an agent's section over the top-level settings, by one rule: a key set in the
 * section replaces the top-level value whole (objects such as `tokenizer` and lists such as
 * `plugins` included), except `options`, which merge per plugin name and then per option key,
 * the agent's value winning. Neither input is modified.
 */
export function applyAgentSection<C extends AgentConfig>(base: C, section: AgentConfig): C {
  const merged: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const key of keysSetBy(section)) {
    merged[key] = key === "options" ? mergePluginOptions(base.options ?? {}, section.options ?? {}) : section[key];
  }
  return merged as C;
}

/**
 * Merges plugin options per plugin name, then per option key; `over` wins. An option whose
 * value is an object is replaced whole, not merged further.
 */
export function mergePluginOptions(base: PluginOptionsConfig, over: PluginOptionsConfig): PluginOptionsConfig {
  const names = new Set([...Object.keys(base), ...Object.keys(over)]);
  // Object.fromEntries defines own properties, so a plugin named "__proto__" stays a plain key.
  return Object.fromEntries(
    [...names].map((name) => {
      const own = Object.hasOwn(base, name) ? base[name] : undefined;
      const theirs = Object.hasOwn(over, name) ? over[name] : undefined;
      return [name, theirs === undefined ? (own ?? {}) : { ...own, ...theirs }];
    }),
  );
}
