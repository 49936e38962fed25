/**
 * For tests of code that reads OpenClaw's sessions: writes an agent database in OpenClaw's
 * SQLite layout (only the tables the reader uses, `OPENCLAW_SESSION_TABLES_SQL`) holding the
 * given sessions' pi entry lines as transcript events.
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import * as zlib from "node:zlib";
import { OPENCLAW_SESSION_TABLES_SQL } from "../openclaw-schema.js";

export interface OpenClawTestSession {
  /** The session key, e.g. `agent:main:main`. */
  readonly key: string;
  /** The session id its node points at. */
  readonly id: string;
  /** Its pi entry lines (JSON), one event each, in order. */
  readonly lines: readonly string[];
  /** The node's `entry_json` (default `{}`). */
  readonly entry?: unknown;
  /** The window's `created_at` (default 1). */
  readonly createdAt?: number;
  /** The node's and the window's `updated_at` (default 1). */
  readonly updatedAt?: number;
  /** The first event's `created_at`; each next event one more (default 0). */
  readonly firstEventAt?: number;
  /** Events stored zstd-compressed, as OpenClaw does for large ones, when this Node has zstd. */
  readonly packed?: (seq: number) => boolean;
}

const zstdCompress = (zlib as unknown as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync;

/** Writes `database` (and its folder) with the sessions. */
export function writeOpenClawDatabase(database: string, sessions: readonly OpenClawTestSession[]): void {
  mkdirSync(dirname(database), { recursive: true });
  const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
  // Only the tables the reader uses: the rows' other references (conversations) are not there.
  const db = new Database(database, { enableForeignKeyConstraints: false });
  try {
    db.exec(OPENCLAW_SESSION_TABLES_SQL);
    const node = db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)");
    const window = db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)");
    const plain = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
    const packed = db.prepare("INSERT INTO transcript_events (session_id, seq, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?, ?, ?, ?, ?, ?)");
    for (const session of sessions) {
      const updatedAt = session.updatedAt ?? 1;
      node.run(session.key, session.id, JSON.stringify(session.entry ?? {}), updatedAt);
      window.run(session.id, session.key, session.createdAt ?? 1, updatedAt);
      session.lines.forEach((line, seq) => {
        const at = (session.firstEventAt ?? 0) + seq;
        if (zstdCompress !== undefined && session.packed?.(seq) === true) packed.run(session.id, seq, zstdCompress(Buffer.from(line)), Buffer.byteLength(line), "{}", at);
        else plain.run(session.id, seq, line, at);
      });
    }
  } finally {
    db.close();
  }
}
