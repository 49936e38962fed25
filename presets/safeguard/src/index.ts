import type { Preset } from "@compaction/core";

/**
 * @compaction/preset-safeguard — safeguard + last-turn-injection: a structured summary of older messages, the newest 20,000 tokens kept
 * verbatim, the last exchange quoted in the summary. The default preset.
 * A preset is data: plugins (resolved from this package's dependencies) with their options.
 */
const preset: Preset = {
  name: "safeguard",
  plugins: [
    "summarizer-extractive",
    ["safeguard", { keepRecentTokens: 20_000 }],
    ["last-turn-injection", { lastTurnMaxTokens: 2_000 }],
  ],
  autoCompact: { threshold: 0.8 },
};

export default preset;
export { preset };
