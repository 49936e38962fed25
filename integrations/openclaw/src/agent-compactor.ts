/**
 * Which compactor serves an OpenClaw session: the `.compactionrc` found from the plugin's `cwd`
 * (default: the agent's workspace), with the section of the session's agent. An OpenClaw agent
 * without a section (every agent of a config with no `agents`) uses the config's top level; an
 * agent named in the plugin's settings must have its section. The engine and the recall tool
 * both ask here, so they always agree.
 */
import type { Compactor, PiMessage } from "@compaction/core";
import type { CompactorCache, CompactorKey } from "./compactor-cache.js";
import { agentIdOfSessionKey, type ResolvedOpenClawOptions } from "./options.js";

/** What OpenClaw says about the session a call is for. */
export interface SessionWhere {
  readonly workspaceDir?: string | undefined;
  readonly sessionKey?: string | undefined;
  readonly agentId?: string | undefined;
}

/** The `.compactionrc` agent section for a session: the plugin's `agent`, else OpenClaw's agent id. */
export function agentOf(options: ResolvedOpenClawOptions, where: SessionWhere): string | undefined {
  return options.agent ?? where.agentId ?? agentIdOfSessionKey(where.sessionKey);
}

function keyOf(options: ResolvedOpenClawOptions, where: SessionWhere, agent: string | undefined): CompactorKey {
  return { cwd: options.cwd ?? where.workspaceDir ?? process.cwd(), agent, preset: options.preset };
}

/** The session's compactor. Rejects with the config's CompactionError. */
export async function compactorFor(compactors: CompactorCache, options: ResolvedOpenClawOptions, where: SessionWhere): Promise<Compactor<PiMessage>> {
  const agent = agentOf(options, where);
  try {
    return await compactors.get(keyOf(options, where, agent));
  } catch (error) {
    if (options.agent !== undefined || agent === undefined || !isMissingAgentSection(error, agent)) throw error;
    return compactors.get(keyOf(options, where, undefined));
  }
}

/**
 * The session's compactor when one was already built, without waiting (for OpenClaw's tool
 * factories, which are synchronous): the compactor, `null` when its config failed, undefined
 * when nothing has been built for the session yet.
 */
export function settledCompactorFor(compactors: CompactorCache, options: ResolvedOpenClawOptions, where: SessionWhere): Compactor<PiMessage> | null | undefined {
  const agent = agentOf(options, where);
  const own = compactors.settled(keyOf(options, where, agent));
  if (own === undefined) return undefined;
  if ("compactor" in own) return own.compactor;
  if (options.agent !== undefined || agent === undefined || !isMissingAgentSection(own.error, agent)) return null;
  const top = compactors.settled(keyOf(options, where, undefined));
  if (top === undefined) return undefined;
  return "compactor" in top ? top.compactor : null;
}

/** The config's answer when it has no `agents.<agent>` section (COMPACTION_CONFIG_INVALID at `/agents/<agent>`). */
function isMissingAgentSection(error: unknown, agent: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "COMPACTION_CONFIG_INVALID" && typeof message === "string" && message.includes(`/agents/${agent}: expected a section for agent`);
}
