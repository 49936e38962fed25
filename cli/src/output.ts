import { type Calibration, type ContextBase, type ContextTokens, counterLabel, providerRatio } from "@compaction/core";
/** Colours (NO_COLOR, FORCE_COLOR, terminal detection, --no-color), numbers and the usage bar. */
import { formatTokenCount, formatUsageLine, type UsageTone, usagePercent } from "@compaction/context-manager";
import { type TranscriptFormat } from "@compaction/transcript";
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

/** `1 message`, `2 messages`: a count and the word, plural unless the count is 1. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** `6240` -> `6,240`. */
export function formatTokens(n: number): string {
  return formatTokenCount(n);
}

/** Share of the window used, as whole percent (can pass 100). */
export function percentUsed(used: number, window: number): number {
  return usagePercent(used, window);
}

/**
 * `[████████░░] 78% context (6,240 / 8,000 tokens)` (core's `formatUsageLine`): coloured green,
 * yellow from 70 %, red from 90 %, the empty cells dim.
 */
export function usageBar(used: number, window: number, c: Colors, width = 10): string {
  const paints: Readonly<Record<UsageTone, (text: string) => string>> = { low: c.green, medium: c.yellow, high: c.red, empty: c.dim };
  return formatUsageLine(used, window, { width, paint: (text, tone) => paints[tone](text) });
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

const FORMAT_NAMES: Readonly<Record<TranscriptFormat, string>> = {
  pi: "pi session",
  "claude-code": "Claude Code transcript, read-only",
  codex: "Codex rollout, read-only",
};

/** `0194f3a2-...` for a pi session; `<id> [Claude Code transcript, read-only]` for an import. */
export function sessionLabel(session: { readonly id: string | null; readonly format: TranscriptFormat }): string {
  const id = session.id ?? "(no session id)";
  return session.format === "pi" ? id : `${id} [${FORMAT_NAMES[session.format]}]`;
}

/** What a context size starts from (ContextTokens.base, named for the CLI's reader). */
export type MeasureBase =
  /** The provider's newest usage figure. */
  | "usage"
  /** The After the branch's newest compaction recorded (no usage figure since). */
  | "compaction"
  /** No figure: every message counted. */
  | "count";

/** Which measure a token figure is in, for `--json`: what it starts from, the counter and the calibration applied to the rest. */
export interface TokenMeasure {
  /** What the figure starts from; the messages after it (`counted`) are counted and calibrated. */
  readonly base: MeasureBase;
  /** Messages counted on top of the base (every message for `count`). */
  readonly counted: number;
  /** The counter, e.g. `tiktoken:o200k_base` or `estimate`. */
  readonly counter: string;
  /**
   * Provider tokens per counted token applied, and provider tokens added per message. `null` (and
   * `source` too, with `samples` 0 and `model` null) when a usage figure or the last compaction's
   * After covers every message and the command did not calibrate (`context status`: the figure is
   * the size as it stands, so it starts no encoder).
   */
  readonly ratio: number | null;
  readonly perMessage: number | null;
  /** `usage`: learned from the session's usage figures; `compaction`: learned before the last compaction, which recorded it (no pairs since); `config`: tokenizer.ratio; `exact`: OpenAI's tokenizer; `none`: raw count. */
  readonly source: Calibration["source"] | null;
  /** Pairs of usage figures the ratio rests on. */
  readonly samples: number;
  readonly model: string | null;
}

/**
 * The measure of `size`, a context of `messages` messages counted with `counter`: a
 * `ContextTokens`, or a `ContextBase` that covers every message (nothing counted, no calibration).
 */
export function tokenMeasure(counter: string, size: ContextTokens | ContextBase, messages: number): TokenMeasure {
  const base: MeasureBase = size.base === "anchor" ? "compaction" : size.base;
  const counted = messages - 1 - (size.lastUsageIndex ?? -1);
  // A figure that covers every message is the size as it stands: no count is calibrated.
  if (!("calibration" in size) || (counted === 0 && base !== "count")) return { base, counted, counter, ratio: null, perMessage: null, source: null, samples: 0, model: null };
  const { ratio, perMessage, source, samples } = size.calibration;
  return { base, counted, counter, ratio, perMessage, source, samples, model: size.calibration.model ?? null };
}

/**
 * How `compact`'s After is measured: our count of the messages it leaves at the run's ratio,
 * Before over our count (`countedBefore`) of the `messages` before, at least 1
 * (`CompactionRun.providerRatio`), so what no message shows (system prompt, tools) and the
 * provider's tokenizer scale with what is kept.
 */
export function describeAfterMeasure(counter: string, tokensBefore: number, countedBefore: number, messages: number): string {
  const label = counterLabel(counter);
  const before = `our count of the ${plural(messages, "message")} before`;
  if (countedBefore > 0 && tokensBefore < countedBefore) return `After: ${label} x1.00 (Before is under ${before}: After is our count)`;
  return `After: ${label} x${providerRatio(tokensBefore, countedBefore).toFixed(2)} (Before over ${before})`;
}

/**
 * One line saying which measure the figures are in: the provider's (its newest usage figure, or
 * the last compaction's recorded After when no usage figure is newer, plus our count of what
 * followed, calibrated) or our raw count.
 */
export function describeMeasure(measure: TokenMeasure): string {
  const count = counterLabel(measure.counter);
  const from = measure.base === "compaction" ? "the last compaction's After" : "usage figure";
  // A figure that covers every message is the size as it stands: no count is calibrated.
  if (measure.source === null || measure.ratio === null || measure.perMessage === null || (measure.counted === 0 && measure.base !== "count")) {
    return measure.base === "compaction" ? `provider's: ${from} (no messages since)` : `provider's: ${from} of the newest message (nothing after it to count)`;
  }
  const framing = measure.perMessage >= 0.5 ? ` +${Math.round(measure.perMessage)}/message` : "";
  const scaled = `${count} x${measure.ratio.toFixed(2)}${framing}`;
  const since = measure.counted === 0 ? "the messages since (none yet)" : `the ${plural(measure.counted, "message")} since`;
  // With no figure to start from (`count`), every message is counted: no "figure +".
  const start = measure.base === "count" ? "" : `${from} + `;
  const after = measure.base === "count" ? "of every message" : measure.base === "compaction" ? `on ${since}` : "after it";
  switch (measure.source) {
    case "usage":
      return `provider's: ${start}${scaled} ${after} (from ${measure.samples} usage pairs${measure.model === null ? "" : `, ${measure.model}`})`;
    case "compaction":
      return `provider's: ${start}${scaled} ${after} (from ${measure.samples} usage pairs before the last compaction${measure.model === null ? "" : `, ${measure.model}`})`;
    case "config":
      return `provider's: ${start}${scaled} ${after} (tokenizer.ratio)`;
    case "exact":
      return `provider's: ${start}${count} ${after} (exact for ${measure.model ?? "this model"})`;
    case "none":
      return measure.base === "count"
        ? `raw ${count} count ${after} (no usage figure to start from or calibrate with yet)`
        : `${from} + raw ${count} count ${after} (no usage pairs to calibrate from yet)`;
  }
}

/**
 * After an auto-compaction threshold in tokens: where the share came from when the usable window
 * (core's `usableWindow`) is less than the context window, else nothing.
 */
export function usableWindowNote(usable: number, contextWindow: number): string {
  return usable < contextWindow
    ? `, of ${formatTokens(usable)} usable: the reserve for the reply takes over a tenth of the ${formatTokens(contextWindow)}-token window`
    : "";
}
