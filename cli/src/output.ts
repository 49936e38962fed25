/** Colours (NO_COLOR, FORCE_COLOR, terminal detection, --no-color), numbers and the usage bar. */
import pc from "picocolors";
import type { CliStream } from "./io.js";

export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Whether to colour what goes to `stream`: never with `--no-color` or a non-empty `NO_COLOR`;
 * always with `FORCE_COLOR` set to anything but `0`/`false`; otherwise when it is a terminal.
 */
export function colorEnabled(stream: CliStream, env: Readonly<Record<string, string | undefined>>, flag: boolean): boolean {
  if (!flag) return false;
  if (env["NO_COLOR"] !== undefined && env["NO_COLOR"] !== "") return false;
  const force = env["FORCE_COLOR"];
  if (force !== undefined) return force !== "0" && force !== "false";
  return stream.isTTY === true && env["TERM"] !== "dumb";
}

/** picocolors functions that colour only when `enabled`. */
export function colors(enabled: boolean): Colors {
  return pc.createColors(enabled);
}

/** `6240` -> `6,240`. */
export function formatTokens(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Share of the window used, as whole percent (can pass 100). */
export function percentUsed(used: number, window: number): number {
  return window > 0 ? Math.round((used / window) * 100) : 0;
}

/**
 * `[████████░░] 78% context (6,240 / 8,000 tokens)`: ten cells, each a tenth of the window
 * (rounded to the nearest cell, full when at or over it). Coloured green, yellow from 70 %, red from 90 %.
 */
export function usageBar(used: number, window: number, c: Colors, width = 10): string {
  const ratio = window > 0 ? used / window : 0;
  const filled = Math.max(0, Math.min(width, Math.round(ratio * width)));
  const paint = ratio >= 0.9 ? c.red : ratio >= 0.7 ? c.yellow : c.green;
  const bar = paint("█".repeat(filled)) + c.dim("░".repeat(width - filled));
  return `[${bar}] ${percentUsed(used, window)}% context (${formatTokens(used)} / ${formatTokens(window)} tokens)`;
}

/** `3 minutes ago`-style wording for a duration in milliseconds. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const units: ReadonlyArray<readonly [string, number]> = [
    ["day", 86_400],
    ["hour", 3_600],
    ["minute", 60],
  ];
  for (const [name, size] of units) {
    if (seconds >= size) {
      const n = Math.floor(seconds / size);
      return `${n} ${name}${n === 1 ? "" : "s"} ago`;
    }
  }
  return `${seconds} second${seconds === 1 ? "" : "s"} ago`;
}
