/**
 * The plugin's settings: `plugins.entries.compaction.config` in openclaw.json (validated by
 * OpenClaw against the manifest's configSchema first, and checked again here).
 */
import { type BackgroundMode, CompactionError, DEFAULT_WAIT_MS, ErrorCodes } from "@compaction/core";

export interface OpenClawCompactionOptions {
  /** Where the `.compactionrc` search starts. Default: the agent's workspace directory. */
  readonly cwd?: string;
  /** The `.compactionrc` agent section for every OpenClaw agent. Default: the OpenClaw agent id. */
  readonly agent?: string;
  /** A preset that overrides the config's. */
  readonly preset?: string;
  /** Prune old tool outputs in what is sent. Default true. */
  readonly pruneContext?: boolean;
  /** Load the workspace's code configuration and plugins (`.compactionrc.mjs`, `./my-plugin.js`). Default false. */
  readonly projectCode?: boolean;
  /**
   * Background compaction: `"auto"` (default) prepares the compaction after a turn past the
   * prepare mark, unless the summarizer is the extractive one, and puts it in place after a later
   * turn, at `assemble` or at OpenClaw's `compact`; `true`: always; `false`: compact at the threshold.
   */
  readonly background?: BackgroundMode;
  /** The longest a compaction that cannot wait any more waits for the one being prepared. Default 30,000 ms. */
  readonly waitMs?: number;
}

export interface ResolvedOpenClawOptions {
  readonly cwd: string | undefined;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
  readonly pruneContext: boolean;
  readonly projectCode: boolean;
  readonly background: BackgroundMode;
  readonly waitMs: number;
}

const KEYS = new Set(["cwd", "agent", "preset", "pruneContext", "projectCode", "background", "waitMs"]);

export function resolveOpenClawOptions(config: unknown): ResolvedOpenClawOptions {
  const where = "plugins.entries.compaction.config";
  if (config === undefined || config === null) return { cwd: undefined, agent: undefined, preset: undefined, pruneContext: true, projectCode: false, background: "auto", waitMs: DEFAULT_WAIT_MS };
  if (typeof config !== "object" || Array.isArray(config)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where} must be an object, found ${Array.isArray(config) ? "an array" : typeof config}.`);
  }
  const record = config as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!KEYS.has(key)) throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where}.${key} is not a setting of this plugin (known: ${[...KEYS].join(", ")}).`);
  }
  const text = (key: string): string | undefined => {
    const value = record[key];
    if (value === undefined) return undefined;
    if (typeof value !== "string" || value.trim() === "") throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where}.${key} must be a non-empty string.`);
    return value;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = record[key];
    if (value === undefined) return fallback;
    if (typeof value !== "boolean") throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where}.${key} must be true or false.`);
    return value;
  };
  const background = record["background"] ?? "auto";
  if (background !== true && background !== false && background !== "auto") throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where}.background must be true, false or "auto".`);
  const waitMs = record["waitMs"] ?? DEFAULT_WAIT_MS;
  if (typeof waitMs !== "number" || !(waitMs >= 0)) throw new CompactionError(ErrorCodes.INPUT_INVALID, `${where}.waitMs must be a number of milliseconds of at least 0.`);
  return { cwd: text("cwd"), agent: text("agent"), preset: text("preset"), pruneContext: flag("pruneContext", true), projectCode: flag("projectCode", false), background, waitMs };
}

/** The agent id in an OpenClaw session key (`agent:<id>:<rest>`), or undefined. */
export function agentIdOfSessionKey(sessionKey: string | undefined): string | undefined {
  if (sessionKey === undefined) return undefined;
  const match = /^agent:([^:]+):/.exec(sessionKey);
  return match?.[1];
}
