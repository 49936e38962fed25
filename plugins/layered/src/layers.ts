import type { CompactionTrigger } from "@compaction/core";
import type { LayeredOptions } from "./options.js";

/** The layers of `layered`, as `run.layer` and the event's `layer` name them. */
export type LayeredLayer = "prune" | "summarize" | "full";

/**
 * Layer 1's trigger: the tool outputs hold more than `pruneMinToolTokens` and the context is
 * above `pruneThreshold` of the window (both strictly).
 */
export function shouldPrune(
  ratio: number,
  toolTokens: number,
  options: Pick<LayeredOptions, "pruneThreshold" | "pruneMinToolTokens">,
): boolean {
  return toolTokens > options.pruneMinToolTokens && ratio > options.pruneThreshold;
}

/**
 * The summarising layer for a context at `ratio` of the window (after pruning): `full` above
 * `fullThreshold`, `summarize` above `summarizeThreshold`, and `summarize` for a manual run
 * below both (a user asked for a compaction); none for an automatic run below both.
 */
export function chooseSummaryLayer(
  ratio: number,
  trigger: CompactionTrigger,
  options: Pick<LayeredOptions, "summarizeThreshold" | "fullThreshold">,
): "summarize" | "full" | undefined {
  if (ratio > options.fullThreshold) return "full";
  if (ratio > options.summarizeThreshold || trigger === "manual") return "summarize";
  return undefined;
}
