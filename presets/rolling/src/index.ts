import type { Preset } from "@compaction/core";

/**
 * @compaction/preset-rolling — rolling + recall: the oldest messages are evicted with one
 * eviction note naming `memory_search`, no summary; recall keeps every message (evicted ones
 * too) searchable through that tool. The host opens the session's index and registers the tool
 * (`connectRecall` from @compaction/plugin-recall).
 * A preset is data: plugins (resolved from this package's dependencies) with their options.
 */
const preset: Preset = {
  name: "rolling",
  plugins: ["summarizer-extractive", ["rolling", { targetUtilization: 0.5, minKeepMessages: 10 }], "recall"],
  autoCompact: { threshold: 0.9 },
};

export default preset;
export { preset };
