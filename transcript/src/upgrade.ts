/** Upgrading a version 1 or 2 session file to version 3, as pi does when it opens one. */
import { constants as fsConstants } from "node:fs";
import { copyFile, readFile } from "node:fs/promises";
import writeFileAtomic from "write-file-atomic";
import { fileExists } from "./append-context.js";
import { parseSession } from "./parse.js";
import { type SessionLockOptions, withSessionLock } from "./session-lock.js";
import { CURRENT_SESSION_VERSION, type SessionEntry } from "./types.js";

export interface UpgradedSession {
  readonly path: string;
  /** The version the file had. */
  readonly fromVersion: number;
  /** Where the original was copied, or null when the file was already version 3 (nothing written). */
  readonly backupPath: string | null;
}

/**
 * Rewrites a version 1 or 2 session file as version 3 (ids and parent links, `hookMessage` ->
 * `custom`), as pi does when it opens one, so it can be appended to. Under the lock; the original
 * is first copied to `<path>.bak` (or `<path>.<time>.bak` if that exists) and the new text
 * replaces it atomically. Lines that are not entries (corrupt, or an incomplete last line) are
 * kept as they are, in place. Version 1 entries get the reader's ids (`l` + line number).
 */
export async function upgradeSession(path: string, options: { readonly lock?: SessionLockOptions } = {}): Promise<UpgradedSession> {
  return withSessionLock(
    path,
    async (stillHeld) => {
      const text = await readFile(path, "utf8");
      const parsed = parseSession(text, { file: path, skipCorrupt: true });
      if (parsed.version >= CURRENT_SESSION_VERSION) return { path, fromVersion: parsed.version, backupPath: null };
      const byLine = new Map<number, SessionEntry>();
      parsed.entries.forEach((entry, index) => byLine.set(parsed.lines[index] as number, entry));
      const lines = text.split("\n");
      const endsWithNewline = text.endsWith("\n");
      if (endsWithNewline) lines.pop();
      let headerDone = false;
      const upgraded = lines.map((line, index) => {
        const entry = byLine.get(index + 1);
        if (entry !== undefined) return JSON.stringify(entry);
        if (!headerDone && line.trim() !== "") {
          headerDone = true;
          return JSON.stringify({ ...parsed.header, version: CURRENT_SESSION_VERSION });
        }
        return line;
      });
      stillHeld();
      const backupPath = await backupCopy(path);
      await writeFileAtomic(path, upgraded.join("\n") + (endsWithNewline ? "\n" : ""), { encoding: "utf8", fsync: true });
      return { path, fromVersion: parsed.version, backupPath };
    },
    options.lock,
  );
}

async function backupCopy(path: string): Promise<string> {
  const plain = `${path}.bak`;
  const target = (await fileExists(plain)) ? `${path}.${new Date().toISOString().replace(/[:.]/g, "-")}.bak` : plain;
  await copyFile(path, target, fsConstants.COPYFILE_EXCL);
  return target;
}
