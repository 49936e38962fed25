/**
 * The messages of one OpenClaw session as a pi session file of this plugin's own, for recall's
 * index (@compaction/plugin-recall reads pi session files, by byte offset, and indexes what is
 * appended). OpenClaw keeps its transcript in SQLite and hands a context engine its messages on
 * every call; the journal appends the ones it has not written yet, so the messages a rolling
 * compaction evicts stay searchable. OpenClaw's transcript is never written.
 *
 * Each line after the header is a pi `message` entry with a sequential id (`m1`, `m2`, ...). When
 * OpenClaw's messages no longer start with what the journal holds (a rewound or replaced session),
 * the journal is written again from them, atomically, and recall's index rebuilds on its next use.
 */
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { anchorOf, sameAnchor, type MessageAnchor } from "./anchor.js";
import type { AgentMessage } from "./openclaw-api.js";

/** What one `sync` did. */
export interface JournalSync {
  /** Messages appended. */
  readonly appended: number;
  /** The journal was written again from the start (OpenClaw's messages no longer extend it). */
  readonly rewritten: boolean;
}

export class RecallJournal {
  readonly path: string;
  readonly #sessionId: string;
  /** The anchor of each message the journal holds, in order; undefined until read from the file. */
  #anchors: MessageAnchor[] | undefined;
  /** The file's size when this process last read or wrote it: another size means another process wrote it. */
  #size = -1;

  constructor(path: string, sessionId: string) {
    this.path = path;
    this.#sessionId = sessionId;
  }

  /** How many messages the journal holds. */
  get length(): number {
    return this.#load().length;
  }

  /** Brings the journal up to `messages` (OpenClaw's messages of the session, oldest first). */
  sync(messages: readonly AgentMessage[]): JournalSync {
    const anchors = this.#load();
    if (!existsSync(this.path)) {
      this.#rewrite(messages);
      return { appended: messages.length, rewritten: anchors.length > 0 };
    }
    const shared = Math.min(anchors.length, messages.length);
    // An empty view is a prefix of anything (never a reason to drop what was recorded).
    const extends_ = shared === 0 ? true : sameAnchor(anchors[shared - 1] as MessageAnchor, anchorOf(messages[shared - 1] as AgentMessage));
    if (!extends_) {
      this.#rewrite(messages);
      return { appended: messages.length, rewritten: true };
    }
    if (messages.length <= anchors.length) return { appended: 0, rewritten: false };
    const lines = messages.slice(anchors.length).map((message, offset) => entryLine(message, anchors.length + offset));
    appendFileSync(this.path, lines.join(""));
    this.#size = statSync(this.path).size;
    for (const message of messages.slice(anchors.length)) anchors.push(anchorOf(message));
    return { appended: lines.length, rewritten: false };
  }

  /**
   * Brings the journal up to a view of the session that starts at the journaled message `from`
   * (what assemble returned after a compaction, less its head: OpenClaw's messages from the first
   * one kept on). Appends what the view adds; leaves the journal alone, and returns undefined,
   * when it does not hold `from` or the view does not continue it (it never rewrites from a view,
   * which would drop the evicted messages).
   */
  syncFrom(from: MessageAnchor, messages: readonly AgentMessage[]): JournalSync | undefined {
    const anchors = this.#load();
    let start = -1;
    for (let index = anchors.length - 1; index >= 0; index--) {
      if (sameAnchor(anchors[index] as MessageAnchor, from)) {
        start = index;
        break;
      }
    }
    if (start < 0 || !existsSync(this.path)) return undefined;
    const held = anchors.length - start;
    const shared = Math.min(held, messages.length);
    if (shared > 0 && !sameAnchor(anchors[start + shared - 1] as MessageAnchor, anchorOf(messages[shared - 1] as AgentMessage))) return undefined;
    if (messages.length <= held) return { appended: 0, rewritten: false };
    const added = messages.slice(held);
    appendFileSync(this.path, added.map((message, offset) => entryLine(message, anchors.length + offset)).join(""));
    for (const message of added) anchors.push(anchorOf(message));
    this.#size = statSync(this.path).size;
    return { appended: added.length, rewritten: false };
  }

  #rewrite(messages: readonly AgentMessage[]): void {
    mkdirSync(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, headerLine(this.#sessionId) + messages.map((message, index) => entryLine(message, index)).join(""));
    renameSync(temporary, this.path);
    this.#anchors = messages.map(anchorOf);
    this.#size = statSync(this.path).size;
  }

  /** The anchors of the messages in the file (read once per process; a torn last line is dropped and rewritten). */
  #load(): MessageAnchor[] {
    if (this.#anchors !== undefined && this.#size === (statSync(this.path, { throwIfNoEntry: false })?.size ?? -1)) return this.#anchors;
    const anchors: MessageAnchor[] = [];
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      this.#anchors = anchors;
      this.#size = -1;
      return anchors;
    }
    const lines = text.split("\n");
    const complete = text.endsWith("\n");
    let intact = complete;
    for (const [index, line] of lines.entries()) {
      if (index === 0 || line === "") continue;
      try {
        const entry = JSON.parse(line) as { type?: unknown; message?: unknown };
        if (entry.type === "message" && typeof entry.message === "object" && entry.message !== null) {
          anchors.push(anchorOf(entry.message as AgentMessage));
          continue;
        }
      } catch {
        // a torn or foreign line: fall through
      }
      intact = false;
      break;
    }
    if (!intact) {
      // Not a journal this code wrote whole (a crash mid-append): start it again from OpenClaw's messages on the next sync.
      this.#anchors = [];
      writeFileSync(this.path, headerLine(this.#sessionId));
      this.#size = statSync(this.path).size;
      return this.#anchors;
    }
    this.#anchors = anchors;
    this.#size = Buffer.byteLength(text);
    return anchors;
  }
}

function headerLine(sessionId: string): string {
  return `${JSON.stringify({ type: "session", version: 3, id: `openclaw-${sessionId}`, timestamp: new Date().toISOString(), source: "OpenClaw session, journaled by @compaction/openclaw for recall" })}\n`;
}

function entryLine(message: AgentMessage, index: number): string {
  const timestamp = typeof message.timestamp === "number" && Number.isFinite(message.timestamp) ? new Date(message.timestamp).toISOString() : new Date().toISOString();
  return `${JSON.stringify({ type: "message", id: `m${index + 1}`, parentId: index === 0 ? null : `m${index}`, timestamp, message })}\n`;
}

/** The journal's file name for a session id: a digest, so any id makes a safe name. */
export function journalName(sessionId: string): string {
  return `${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}.jsonl`;
}
