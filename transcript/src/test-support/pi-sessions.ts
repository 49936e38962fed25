/**
 * Generated pi-coding-agent session files for tests: random trees of entries with branches,
 * several compactions, settings changes and unicode text, written the way pi writes them
 * (`JSON.stringify` per line, pi's key order) so the fast reader's id scan is exercised; some
 * entry kinds use pi's other key orders, which the fast reader has to parse in full.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";

export type SessionOp =
  | { kind: "message"; role: "user" | "assistant" | "toolResult" | "bashExecution" | "hookMessage"; text: string; model: number }
  | { kind: "custom_message"; text: string; display: boolean }
  | { kind: "branch_summary"; text: string }
  | { kind: "model_change"; model: number }
  | { kind: "thinking"; level: number }
  | { kind: "custom"; text: string }
  | { kind: "label"; pick: number }
  | { kind: "compaction"; pick: number; target: "branch" | "anywhere" | "missing" | "self" }
  | { kind: "move"; pick: number }
  | { kind: "blank" };

const LEVELS = ["off", "low", "medium", "high"];
const MODELS = [
  { provider: "anthropic", model: "claude-sonnet-4-5" },
  { provider: "openai", model: "gpt-5" },
  { provider: "google", model: "gemini-2.5-pro" },
];

const text = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme", maxLength: 30 }) },
  { weight: 2, arbitrary: fc.constantFrom("", "héllo wörld", "日本語のテキスト", "emoji 🎉👩‍💻 mix", "line\nbreak\r\n\"quoted\"", "\u2028\u2029") },
  { weight: 1, arbitrary: fc.nat({ max: 3000 }).map((n) => "€𝄞".repeat(n)) },
);

export const sessionOp: fc.Arbitrary<SessionOp> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ kind: fc.constant("message" as const), role: fc.constantFrom("user", "assistant", "toolResult", "bashExecution", "hookMessage"), text, model: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom_message" as const), text, display: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("branch_summary" as const), text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("model_change" as const), model: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("custom" as const), text }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("label" as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("compaction" as const), pick: fc.nat(), target: fc.constantFrom("branch", "branch", "branch", "anywhere", "missing", "self") }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("move" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("blank" as const) }) },
);

export const sessionOps = fc.array(sessionOp, { maxLength: 60 });

export interface GeneratedSession {
  /** The file's lines (header first), without line breaks. */
  lines: string[];
  /** Ids of the entries, in file order (version 1: none). */
  ids: string[];
}

/**
 * Builds a session from operations. Version 3 and 2 make trees (`move` sets the leaf back to
 * an earlier entry); version 2 keeps `hookMessage` roles; version 1 writes no ids, a linear
 * history, and `firstKeptEntryIndex` (the header is index 0) on compactions.
 */
export function buildSession(ops: readonly SessionOp[], version: 1 | 2 | 3 = 3): GeneratedSession {
  const lines: string[] = [];
  const ids: string[] = [];
  const parents = new Map<string, string | null>();
  const header: Record<string, unknown> = { type: "session", ...(version === 1 ? {} : { version }), id: "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/project" };
  lines.push(JSON.stringify(header));
  let leaf: string | null = null;
  let clock = Date.UTC(2026, 0, 1);
  const now = () => new Date((clock += 1000)).toISOString();
  const branchIds = (): string[] => {
    const path: string[] = [];
    for (let id = leaf; id !== null; id = parents.get(id) ?? null) path.push(id);
    return path.reverse();
  };
  const add = (fields: (base: { id: string; parentId: string | null; timestamp: string }) => Record<string, unknown>): void => {
    const id = `e${(ids.length + 1).toString(16).padStart(7, "0")}`;
    const timestamp = now();
    const entry = fields({ id, parentId: leaf, timestamp });
    if (version === 1) {
      delete entry.id;
      delete entry.parentId;
    }
    lines.push(JSON.stringify(entry));
    ids.push(id);
    parents.set(id, leaf);
    leaf = id;
  };

  for (const op of ops) {
    switch (op.kind) {
      case "message": {
        const role = op.role === "hookMessage" && version === 3 ? "custom" : op.role;
        add((b) => ({ type: "message", ...b, message: message(role, op.text, op.model, clock) }));
        break;
      }
      case "custom_message":
        // pi's key order: customType etc. come before id.
        add((b) => ({ type: "custom_message", customType: "ext", content: op.text, display: op.display, ...b }));
        break;
      case "branch_summary":
        add((b) => ({ type: "branch_summary", ...b, fromId: ids[0] ?? "root", summary: op.text }));
        break;
      case "model_change": {
        const m = MODELS[op.model] as { provider: string; model: string };
        add((b) => ({ type: "model_change", ...b, provider: m.provider, modelId: m.model }));
        break;
      }
      case "thinking":
        add((b) => ({ type: "thinking_level_change", ...b, thinkingLevel: LEVELS[op.level] }));
        break;
      case "custom":
        add((b) => ({ type: "custom", customType: "ext-state", data: { note: op.text }, ...b }));
        break;
      case "label":
        if (ids.length > 0) add((b) => ({ type: "label", ...b, targetId: ids[op.pick % ids.length], label: "mark" }));
        break;
      case "compaction": {
        const onBranch = branchIds();
        const index = ids.length + 1; // this compaction's index with the header as 0
        let firstKept: string;
        if (op.target === "branch" && onBranch.length > 0) firstKept = onBranch[op.pick % onBranch.length] as string;
        else if (op.target === "anywhere" && ids.length > 0) firstKept = ids[op.pick % ids.length] as string;
        else if (op.target === "self") firstKept = `e${(ids.length + 1).toString(16).padStart(7, "0")}`;
        else firstKept = "nothere1";
        const keptIndex = op.target === "missing" ? 10_000 : ids.indexOf(firstKept) + 1 || index;
        add((b) => ({
          type: "compaction",
          ...b,
          summary: `summary ${ids.length}`,
          ...(version === 1 ? { firstKeptEntryIndex: keptIndex } : { firstKeptEntryId: firstKept }),
          tokensBefore: 1000 + ids.length,
          details: { readFiles: [], modifiedFiles: [] },
        }));
        break;
      }
      case "move":
        if (version !== 1 && ids.length > 0) leaf = op.pick % (ids.length + 1) === ids.length ? null : (ids[op.pick % (ids.length + 1)] as string);
        break;
      case "blank":
        lines.push(op.kind === "blank" && ids.length % 2 === 0 ? "" : "   ");
        break;
    }
  }
  return { lines, ids };
}

function message(role: string, body: string, model: number, clock: number): Record<string, unknown> {
  const m = MODELS[model] as { provider: string; model: string };
  switch (role) {
    case "assistant":
      return { role, content: [{ type: "text", text: body }], provider: m.provider, model: m.model, usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 }, stopReason: "stop", timestamp: clock };
    case "toolResult":
      return { role, toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: body }], isError: false, timestamp: clock };
    case "bashExecution":
      return { role, command: "ls", output: body, exitCode: 0, cancelled: false, timestamp: clock };
    case "hookMessage":
    case "custom":
      return { role, customType: "hook", content: body, display: true, timestamp: clock };
    default:
      return { role: "user", content: [{ type: "text", text: body }], timestamp: clock };
  }
}

/** Joins lines into file text. */
export function sessionText(lines: readonly string[], options: { crlf?: boolean; finalNewline?: boolean } = {}): string {
  const eol = options.crlf ? "\r\n" : "\n";
  return lines.join(eol) + (options.finalNewline === false ? "" : eol);
}

/** A temporary directory for session files; `cleanup()` removes it. */
export function tmpSessionDir(): { dir: string; file(name: string, text: string): string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "compaction-transcript-"));
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, content);
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
