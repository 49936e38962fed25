/**
 * Reading a session's visible messages through OpenClaw's own transcript accessor
 * (`openclaw/plugin-sdk/session-transcript-runtime`), for a `/compact` in a process that has not
 * assembled the session yet. Read-only; OpenClaw resolves the SQLite store itself.
 */
import type { AgentMessage } from "./openclaw-api.js";
import type { TranscriptReader } from "./engine.js";

const SDK = "openclaw/plugin-sdk/session-transcript-runtime";

interface TranscriptSdk {
  readVisibleSessionTranscriptMessageEntries(params: { agentId?: string; sessionId: string; sessionKey?: string }): Promise<readonly unknown[]>;
}

export const readTranscriptThroughOpenClaw: TranscriptReader = async (target) => {
  const sdk = (await import(SDK)) as Partial<TranscriptSdk>;
  if (typeof sdk.readVisibleSessionTranscriptMessageEntries !== "function") return undefined;
  const entries = await sdk.readVisibleSessionTranscriptMessageEntries({
    sessionId: target.sessionId,
    sessionKey: target.sessionKey,
    ...(target.agentId === undefined ? {} : { agentId: target.agentId }),
  });
  const messages: AgentMessage[] = [];
  for (const entry of entries) {
    const message = (entry as { message?: unknown }).message;
    if (typeof message === "object" && message !== null && typeof (message as { role?: unknown }).role === "string") messages.push(message as AgentMessage);
  }
  return messages;
};
