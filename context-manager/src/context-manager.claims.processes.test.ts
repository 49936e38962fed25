/**
 * Two worker processes (test-support/background-claim-worker.mjs), each running the real context
 * manager over the same session in one SQLite file, with background compaction on and a summary
 * that takes 400 ms: both append turns past the prepare mark while it is written. With the claim
 * in the database exactly one compaction is prepared and exactly one is applied, by the worker
 * holding the claim, and the other goes on from it; without the claim (the control) both prepare.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { openSqliteStore, type SessionEntry } from "@compaction/transcript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./test-support/background-claim-worker.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
const dir = mkdtempSync(join(tmpdir(), "cm-claims-processes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  readonly name: string;
  readonly starts: number;
  readonly applied: number;
  readonly foreground: number;
  readonly claimedElsewhere: string[];
  readonly dropped: string[];
  readonly superseded: number;
  readonly errors: string[];
  readonly summaries: number;
  readonly turns: number;
  readonly sawCompaction: boolean;
  readonly maxTokens: number;
  readonly coldMark: number;
}

/** Starts one worker; resolves once it is ready for "go". */
async function start(file: string, session: string, name: string, mode: "claims" | "no-claims"): Promise<{ child: ChildProcessWithoutNullStreams; report: Promise<Report> }> {
  const child = spawn(process.execPath, [WORKER, file, session, name, "400", "80", "150", mode], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    wake?.();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const line = lines.shift();
      if (line !== undefined) return line;
      const woke = new Promise<void>((resolve) => (wake = resolve));
      const code = await Promise.race([woke.then(() => undefined), exited]);
      if (code !== undefined && lines.length === 0) throw new Error(`worker ${name} exited (${code}) before reporting: ${stderr}`);
    }
  };
  expect(JSON.parse(await nextLine())).toEqual({ ready: true });
  return { child, report: nextLine().then((line) => JSON.parse(line) as Report) };
}

async function run(mode: "claims" | "no-claims"): Promise<{ reports: Report[]; entries: SessionEntry[]; claims: number }> {
  const file = join(dir, `${mode}.sqlite`);
  const created = await openSqliteStore({ file, create: { cwd: "/srv" } });
  const session = created.sessionId;
  await created.close();
  const workers = await Promise.all(["a", "b"].map((name) => start(file, session, name, mode)));
  for (const worker of workers) worker.child.stdin.write("go\n");
  const reports = await Promise.all(workers.map((worker) => worker.report));
  const store = await openSqliteStore({ file, session });
  const entries = await store.entries();
  await store.close();
  const db = new Database(file, { readOnly: true });
  const claims = Number((db.prepare("SELECT count(*) AS n FROM compaction_preparation_claims").get() as { n: number }).n);
  db.close();
  return { reports, entries, claims };
}

function textOf(entry: SessionEntry): string | null {
  if (entry.type !== "message") return null;
  const content = (entry.message as { content: unknown }).content;
  const first = Array.isArray(content) ? (content[0] as { text?: unknown }) : undefined;
  return typeof first?.text === "string" ? first.text : null;
}

describe("two worker processes on one SQLite session, with background compaction", () => {
  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error(`The workers run the built package, and ${BUILT} is missing: run \`npm run build\` in context-manager first.`);
  });

  it("prepare exactly one compaction and apply exactly one, claimed in the database by one of them", async () => {
    const { reports, entries, claims } = await run("claims");
    const [a, b] = reports as [Report, Report];
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      expect(report.sawCompaction).toBe(true);
      // Both appended past the prepare mark while the summary was written.
      expect(report.maxTokens).toBeGreaterThan(report.coldMark);
    }
    // Counted from the events: one preparation, one compaction applied, none dropped or doubled.
    expect(a.starts + b.starts).toBe(1);
    expect(a.applied + b.applied).toBe(1);
    expect(a.foreground + b.foreground).toBe(0);
    expect([...a.dropped, ...b.dropped]).toEqual([]);
    expect(a.superseded + b.superseded).toBe(0);
    const holder = a.starts === 1 ? a : b;
    const other = holder === a ? b : a;
    expect(holder.applied).toBe(1);
    // Only the holder paid for a model summary (one compaction may ask the model more than once).
    expect(holder.summaries).toBeGreaterThan(0);
    expect(other.summaries).toBe(0);
    // The other one was refused the claim (it reached its prepare mark) and named the holder.
    expect(other.claimedElsewhere).toEqual([holder.name]);
    // Counted from the database: one compaction entry, no claim left behind.
    expect(entries.filter((entry) => entry.type === "compaction")).toHaveLength(1);
    expect(claims).toBe(0);
    // Every turn of each worker is in the session once, in its order.
    for (const report of reports) {
      const mine = entries
        .map(textOf)
        .filter((text): text is string => text?.startsWith(`${report.name}-`) === true && text.includes(" asks "))
        .map((text) => Number(text.slice(report.name.length + 1).split(" ")[0]));
      expect(mine).toEqual(Array.from({ length: report.turns }, (_, i) => i));
    }
  }, 60_000);

  it("without the claim (the control), both workers prepare a compaction of the same session", async () => {
    const { reports, entries } = await run("no-claims");
    const [a, b] = reports as [Report, Report];
    expect(a.starts).toBeGreaterThanOrEqual(1);
    expect(b.starts).toBeGreaterThanOrEqual(1);
    expect(a.summaries).toBeGreaterThan(0);
    expect(b.summaries).toBeGreaterThan(0);
    expect(a.claimedElsewhere).toEqual([]);
    expect(b.claimedElsewhere).toEqual([]);
    // The conditional write still keeps one compaction per crossing.
    expect(entries.filter((entry) => entry.type === "compaction").length).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
