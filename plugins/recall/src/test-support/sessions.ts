/** Test support: session files in temporary folders, written with core's createSession/appendEntries. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendEntries, createSession, type NewEntry } from "@compaction/transcript";
import { type PiMessage } from "@compaction/core";
import { builders } from "@compaction/core/testing";
import { afterEach } from "vitest";

/** pi message builders (user, assistant with tool calls, tool results). */
export const pi = builders("pi");

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A new temporary folder, removed after the test. */
export function tempDir(): string {
  const folder = mkdtempSync(join(tmpdir(), "compaction-recall-"));
  folders.push(folder);
  return folder;
}

/** A message entry for appendEntries. */
export function message(value: PiMessage): NewEntry {
  return { type: "message", message: value } as NewEntry;
}

/** A version 3 session file holding these messages (ids assigned), in a temporary folder. */
export async function sessionWith(messages: readonly PiMessage[]): Promise<{ path: string; ids: string[] }> {
  const path = join(tempDir(), "session.jsonl");
  const created = await createSession(path, { cwd: "/project", id: "0194f3a2-0000-7000-8000-000000000001" }, messages.map(message));
  return { path, ids: created.entries.map((entry) => entry.id) };
}

/** Appends messages (to the leaf, or to `parentId`) and returns their ids. */
export async function append(path: string, messages: readonly PiMessage[], parentId?: string): Promise<string[]> {
  const written = await appendEntries(path, messages.map(message), parentId === undefined ? {} : { parentId });
  return written.map((entry) => entry.id);
}

/** A user message. */
export function user(text: string): PiMessage {
  return pi.user(text) as PiMessage;
}

/** An assistant message with text and optional tool calls. */
export function assistant(text: string, calls: { id: string; name?: string; args?: Record<string, unknown> }[] = []): PiMessage {
  return pi.assistant(text, calls) as PiMessage;
}

/** One tool result message. */
export function toolResult(id: string, text: string, name = "bash"): PiMessage {
  return pi.toolResults([{ id, text, name }])[0] as PiMessage;
}
