/**
 * Two processes, each with its own context manager, on one session in a SQLite database:
 * appending at once, each checking the threshold after every message. Nothing is lost, and the
 * session holds exactly the compactions the workers report as theirs (a compaction another
 * worker made first is dropped, never written twice).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { openSqliteStore, type SessionEntry } from "@compaction/transcript";
import { afterAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./test-support/store-worker.mjs", import.meta.url));
const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "compaction-cm-processes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function textOf(entry: SessionEntry): string | null {
  if (entry.type !== "message") return null;
  const content = (entry.message as { content: unknown }).content;
  const first = Array.isArray(content) ? (content[0] as { text?: unknown }) : undefined;
  return typeof first?.text === "string" ? first.text : null;
}

describe("context managers in two processes on one SQLite session", () => {
  it("lose no message and write only the compactions they report, one per crossing", async () => {
    const file = join(dir, "sessions.sqlite");
    const created = await openSqliteStore({ file, create: { cwd: "/srv" } });
    const session = created.sessionId;
    await created.close();
    const count = 40;
    const outputs = await Promise.all(["a", "b"].map((name) => run(process.execPath, [WORKER, file, session, name, String(count)], { cwd: dir })));
    const reports = outputs.map((output) => JSON.parse(output.stdout) as { name: string; compacted: number; superseded: number });
    const store = await openSqliteStore({ file, session });
    const entries = await store.entries();
    const branch = await store.branch();
    await store.close();
    for (const name of ["a", "b"]) {
      const mine = entries.map(textOf).filter((text): text is string => text?.startsWith(`${name}-`) === true).map((text) => Number(text.split(" ")[0]!.slice(2)));
      // Every message once, in the order its worker sent it.
      expect(mine).toEqual(Array.from({ length: count }, (_, i) => i));
    }
    const written = entries.filter((entry) => entry.type === "compaction").length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBe(reports.reduce((sum, report) => sum + report.compacted, 0));
    expect(branch.compactions).toBe(written);
  }, 120_000);
});
