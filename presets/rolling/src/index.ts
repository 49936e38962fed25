import type { Preset } from "@compaction/core";

/**
 * @compaction/preset-rolling — rolling: evict the oldest messages with an eviction note, no summary. Without a recall plugin
 * (memory_search) rolling falls back to a safeguard summary and warns.
 * A preset is data: plugins (resolved from this package's dependencies) with their options.
 */
const preset: Preset = {
  name: "rolling",
  plugins: [["rolling", { targetUtilization: 0.8, minKeepMessages: 10 }]],
  autoCompact: { threshold: 0.9 },
};

export default preset;
export { preset };
