/**
 * The plugin's settings: `plugins.entries.compaction.config` in openclaw.json (validated by
 * OpenClaw against the manifest's configSchema first, and checked again here).
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

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
}

export interface ResolvedOpenClawOptions {
  readonly cwd: string | undefined;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
  readonly pruneContext: boolean;
  readonly projectCode: boolean;
}

const KEYS = new Set(["cwd", "agent", "preset", "pruneContext", "projectCode"]);

export function resolveOpenClawOptions(config: unknown): ResolvedOpenClawOptions {
  const where = "plugins.entries.compaction.config";
  if (config === undefined || config === null) return { cwd: undefined, agent: undefined, preset: undefined, pruneContext: true, projectCode: false };
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
  return { cwd: text("cwd"), agent: text("agent"), preset: text("preset"), pruneContext: flag("pruneContext", true), projectCode: flag("projectCode", false) };
}

/** The agent id in an OpenClaw session key (`agent:<id>:<rest>`), or undefined. */
export function agentIdOfSessionKey(sessionKey: string | undefined): string | undefined {
  if (sessionKey === undefined) return undefined;
  const match = /^agent:([^:]+):/.exec(sessionKey);
  return match?.[1];
}
