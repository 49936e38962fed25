import type { Preset } from "@compaction/core";

/**
 * @compaction/preset-layered — layered + last-turn-injection: prune old tool outputs (80%), then summarise (88%), then compact
 * fully (95%), quoting the last exchange in the summary.
 * A preset is data: plugins (resolved from this package's dependencies) with their options.
 */
const preset: Preset = {
  name: "layered",
  plugins: ["summarizer-extractive", ["layered", {}], ["last-turn-injection", { lastTurnMaxTokens: 2_000 }]],
  autoCompact: { threshold: 0.8 },
};

export default preset;
export { preset };
