/**
 * The one-line context usage display: `[████████░░] 78% context (6,240 / 8,000 tokens)`.
 * Plain text by default; a host that colours its output passes `paint`.
 */
import { formatCount } from "@compaction/core";

/** Above this share of the window the context manager shows the usage line (at or below it, none). */
export const USAGE_LINE_MIN_RATIO = 0.5;

/**
 * What a piece of the bar shows, for a `paint` callback to colour: the filled cells by how full
 * the window is (`low` below 70 %, `medium` from 70 %, `high` from 90 %), `empty` for the rest.
 */
export type UsageTone = "low" | "medium" | "high" | "empty";

export interface UsageLineOptions {
  /** Cells in the bar. Default 10. */
  readonly width?: number;
  /** Colours a piece of the bar; default leaves it as it is. */
  readonly paint?: (text: string, tone: UsageTone) => string;
}

/** `6240` -> `6,240`. */
export function formatTokenCount(n: number): string {
  return formatCount(n);
}

/** Share of the window used, as whole percent (can pass 100); 0 for a window that is not positive. */
export function usagePercent(used: number, window: number): number {
  return window > 0 ? Math.round((used / window) * 100) : 0;
}

/** The tone of the filled cells at `ratio` (used / window). */
export function usageTone(ratio: number): Exclude<UsageTone, "empty"> {
  if (ratio >= 0.9) return "high";
  if (ratio >= 0.7) return "medium";
  return "low";
}

/**
 * `[████████░░] 78% context (6,240 / 8,000 tokens)`: `width` cells, each a share of the window,
 * rounded to the nearest cell and full at or over the window.
 */
export function formatUsageLine(used: number, window: number, options: UsageLineOptions = {}): string {
  const width = options.width ?? 10;
  const paint = options.paint ?? ((text: string) => text);
  const ratio = window > 0 ? used / window : 0;
  const filled = Math.max(0, Math.min(width, Math.round(ratio * width)));
  const bar = paint("█".repeat(filled), usageTone(ratio)) + paint("░".repeat(width - filled), "empty");
  return `[${bar}] ${usagePercent(used, window)}% context (${formatTokenCount(used)} / ${formatTokenCount(window)} tokens)`;
}
