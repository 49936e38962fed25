import type { Preset } from "@compaction/core";

/**
 * @compaction/preset-sliding-window — sliding-window: at 80%, keep the system prompt and the newest messages that fit in 40% of the
 * window, and summarise the middle into one message that begins "Previously:".
 * A preset is data: plugins (resolved from this package's dependencies) with their options.
 */
const preset: Preset = {
  name: "sliding-window",
  plugins: ["summarizer-extractive", ["sliding-window", { keepRatio: 0.4, summaryPrefix: "Previously:" }]],
  autoCompact: { threshold: 0.8 },
};

export default preset;
export { preset };
