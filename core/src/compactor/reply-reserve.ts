/**
 * The reply's reserve: the tokens a request leaves free for what the model writes back. Every
 * budget, threshold and target a host uses is the window less this reserve, so one rule, here,
 * sizes it for every host (the context manager, the integrations, the CLI).
 *
 * - Set by the user (`reserveTokens` in `.compactionrc`, or a host's option): used as set, if it
 *   fits the window: at most `MAX_RESERVE_SHARE` of it. A reserve that does not fit is an error
 *   naming where it was set, when the host learns the window, never a failure at every message.
 * - Not set, with the model's reply limit known (`maxOutputTokens`: the AI SDK's call settings,
 *   OpenClaw's model config, pi's model registry, a host option): that limit, at most
 *   `MODEL_RESERVE_SHARE` of the window (a model that may write half its window rarely does; a
 *   reply that would outgrow the rest is the provider's overflow, which the host recovers from).
 * - Otherwise, `DEFAULT_RESERVE_TOKENS` (pi's figure for a 200k model whose replies may be long)
 *   or `DEFAULT_RESERVE_SHARE` of the window, whichever is smaller: 16,384 at 131k and above,
 *   16,000 at 128k, 8,000 at 64k, 4,000 at 32k, 1,000 at 8k. A fixed 16,384 left a 32k model a
 *   17k usable window (compacting dozens of times in a long session) and an 8k one none.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import { formatCount } from "../format-count.js";

/** pi's reserve, the largest a default reserve gets. */
export const DEFAULT_RESERVE_TOKENS = 16_384;

/** A default reserve is at most this share of the window. */
export const DEFAULT_RESERVE_SHARE = 1 / 8;

/** A reserve from the model's reply limit is at most this share of the window. */
export const MODEL_RESERVE_SHARE = 1 / 4;

/**
 * The largest share of the window a reserve the user set may take: past it the reply would get
 * more room than the context, and no compaction could keep a session going in what is left.
 */
export const MAX_RESERVE_SHARE = 1 / 2;

/** What decides a reserve: the user's setting (and where it was made), else the model's reply limit. */
export interface ReserveSetting {
  /** The reserve the user set, or undefined for the window's default. */
  readonly reserveTokens?: number | undefined;
  /** Where `reserveTokens` was set, for the error. Default: `{ name: "reserveTokens" }`. */
  readonly source?: ReserveSource | undefined;
  /** The most tokens the model writes in one reply, when the host knows it. */
  readonly maxOutputTokens?: number | undefined;
}

/** Where a reserve was set: an option (`name`, and its `path` in the options), or a key of a config file (`file` and the key's `path`). */
export interface ReserveSource {
  /** How the user knows it: `reserveTokens`, `the reserveTokens option of createContextManager`. */
  readonly name: string;
  /** The config file that set it (the error's code is then COMPACTION_CONFIG_INVALID). */
  readonly file?: string | undefined;
  /** The JSON path of the key or option, e.g. `/agents/coder/reserveTokens`. */
  readonly path?: string | undefined;
}

/** The reserve for a window when the user set none (see the file's comment). */
export function defaultReserveTokens(contextWindow: number, maxOutputTokens?: number): number {
  if (maxOutputTokens !== undefined && maxOutputTokens > 0) return Math.min(maxOutputTokens, Math.floor(contextWindow * MODEL_RESERVE_SHARE));
  return Math.min(DEFAULT_RESERVE_TOKENS, Math.floor(contextWindow * DEFAULT_RESERVE_SHARE));
}

/**
 * The reserve for `contextWindow`: the user's, checked against the window, else the default.
 * Throws COMPACTION_INPUT_INVALID (the code of `source`'s kind: COMPACTION_CONFIG_INVALID for a
 * config file) naming `source` when the user's reserve does not fit.
 */
export function replyReserveTokens(contextWindow: number, setting: ReserveSetting = {}): number {
  const { reserveTokens, source = { name: "reserveTokens" } } = setting;
  if (reserveTokens === undefined) return defaultReserveTokens(contextWindow, setting.maxOutputTokens);
  const most = Math.floor(contextWindow * MAX_RESERVE_SHARE);
  if (!Number.isFinite(reserveTokens) || reserveTokens < 0 || reserveTokens > most) {
    const where = source.file === undefined ? source.name : `${source.name} in ${source.file}${source.path === undefined ? "" : `, ${source.path}`}`;
    throw new CompactionError(
      source.file === undefined ? ErrorCodes.INPUT_INVALID : ErrorCodes.CONFIG_INVALID,
      `The reply's reserve (${where}) is ${String(reserveTokens)} tokens, which does not fit the ${formatCount(contextWindow)}-token context window: a reserve for the reply may take at most half of it (${formatCount(most)}), so that the context keeps room to work in.`,
      {
        ...(source.file === undefined ? {} : { file: source.file }),
        ...(source.path === undefined ? {} : { path: source.path }),
        hint: `Lower it, or leave it out: without it the reserve follows the window (${formatCount(defaultReserveTokens(contextWindow))} tokens here: the smaller of ${formatCount(DEFAULT_RESERVE_TOKENS)} and an eighth of the window, or the model's reply limit where the host knows it).`,
      },
    );
  }
  return reserveTokens;
}
