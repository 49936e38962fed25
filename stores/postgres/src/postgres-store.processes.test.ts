/**
 * Many workers, one session, against the real server: two worker processes
 * (test-support/store-worker.mjs, on the built package) write to the same session at once.
 * - Appends in generated interleavings (batch sizes and pauses from fast-check): nothing lost,
 *   nothing twice, one order (every entry's parent is the entry written before it), each append's
 *   entries together and each worker's appends in its own order.
 * - Both read the branch, then both compact from that state: one compaction is written, the
 *   other worker is told which.
 * - A worker SIGKILLed in the middle of its compaction transaction (held there by a trigger that
 *   waits on a lock the test holds), and workers SIGKILLed at generated moments of their work:
 *   the session is as before each cut-off write, never half of one.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { SessionEntry } from "@compaction/transcript";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

const WORKER = fileURLToPath(new URL("./test-support/store-worker.mjs", import.meta.url));
const BUILT = fileURLToPath(new URL("../dist/index.js", import.meta.url));

interface Step {
  readonly append?: number;
  readonly tag?: string;
  readonly pauseMs?: number;
  readonly compact?: true;
  /** Claim the session's background compaction with this lease (ms). */
  readonly claim?: number;
}

type Report = { ready?: true; appended?: string[]; read?: string | null; compacted?: string; declined?: string | null; claimed?: boolean; reason?: string | null; done?: true };

/** A running worker: its reports as they come, and a way to send it lines. */
class Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly reports: Report[] = [];
  readonly exited: Promise<number | null>;
  #waiters: (() => void)[] = [];
  #stderr = "";

  constructor(url: string, schema: string, session: string, plan: readonly Step[]) {
    this.child = spawn(process.execPath, [WORKER, url, schema, session, JSON.stringify(plan)], { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      this.reports.push(JSON.parse(line) as Report);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) =>
      this.child.on("exit", (code) => {
        for (const wake of this.#waiters.splice(0)) wake();
        resolve(code);
      }),
    );
  }

  /** Waits for a report matching `match` (fails with the worker's stderr when it exits first). */
  async waitFor(match: (report: Report) => boolean): Promise<Report> {
    for (;;) {
      const found = this.reports.find(match);
      if (found !== undefined) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`worker exited (${this.child.exitCode ?? this.child.signalCode}): ${this.#stderr}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  async finish(): Promise<void> {
    const code = await this.exited;
    if (code !== 0) throw new Error(`worker exited with ${code}: ${this.#stderr}`);
  }
}

/** True when the entries, in the order written, are one chain: each one's parent is the one before. */
function oneChain(entries: readonly SessionEntry[]): boolean {
  return entries.every((entry, index) => entry.parentId === (index === 0 ? null : entries[index - 1]?.id));
}

describe.skipIf(skipReason !== undefined)(`Postgres store, many processes${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`, () => {
  let url = "";
  let admin: pg.Client;
  let runs = 0;
  const stores: PostgresStore[] = [];

  async function freshSession(schema: string): Promise<PostgresStore> {
    const store = await openPostgresStore({ connectionString: url, session: `p-${++runs}`, create: true, schema });
    stores.push(store);
    return store;
  }

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`The workers run the built package, and ${BUILT} is missing: run \`npm run build\` in stores/postgres first.`);
    url = await freshDatabase("processes");
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await admin?.end();
  });

  const step = fc.record({ append: fc.integer({ min: 1, max: 4 }), pauseMs: fc.integer({ min: 0, max: 4 }) });
  const plan = fc.array(step, { minLength: 1, maxLength: 5 });

  it("two processes appending at once lose nothing and keep one order", async () => {
    await fc.assert(
      fc.asyncProperty(plan, plan, async (planA, planB) => {
        const store = await freshSession("compaction");
        const tagged = (steps: typeof planA, tag: string): Step[] => steps.map((s, i) => ({ ...s, tag: `${tag}${i}` }));
        const workers = [new Worker(url, "compaction", store.sessionId, tagged(planA, "a")), new Worker(url, "compaction", store.sessionId, tagged(planB, "b"))];
        await Promise.all(workers.map((worker) => worker.waitFor((report) => report.ready === true)));
        for (const worker of workers) worker.send("go");
        await Promise.all(workers.map((worker) => worker.finish()));
        const entries = await store.entries();
        const batches = workers.map((worker) => worker.reports.flatMap((report) => (report.appended === undefined ? [] : [report.appended])));
        const reported = batches.flat(2);
        expect(entries.length).toBe([...planA, ...planB].reduce((sum, s) => sum + s.append, 0));
        expect(new Set(entries.map((entry) => entry.id))).toEqual(new Set(reported));
        expect(oneChain(entries)).toBe(true);
        const position = new Map(entries.map((entry, index) => [entry.id, index]));
        for (const workerBatches of batches) {
          let previous = -1;
          for (const batch of workerBatches) {
            const first = position.get(batch[0] as string) as number;
            expect(batch.map((id) => position.get(id))).toEqual(batch.map((_, k) => first + k)); // together
            expect(first).toBeGreaterThan(previous); // in the worker's order
            previous = first;
          }
        }
        const branch = await store.branch();
        expect(branch.leafId).toBe(entries[entries.length - 1]?.id);
        expect(branch.entries).toEqual(entries);
      }),
      { numRuns: 4 },
    );
  });

  it("two processes compacting from the same state write one compaction", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.boolean(), async (count, compactedBefore) => {
        const store = await freshSession("compaction");
        const written = await store.append(Array.from({ length: count }, (_, i) => ({ type: "message", message: { role: "user", content: `m${i}`, timestamp: 1 } }) as never));
        let expectedBefore: string | null = null;
        if (compactedBefore) {
          const first = await store.appendCompaction({ summary: "s", firstKeptEntryId: written[1]?.id as string, tokensBefore: 1, details: {} as never }, { newestCompactionId: null });
          expectedBefore = first.written ? first.entry.id : null;
        }
        const workers = [0, 1].map(() => new Worker(url, "compaction", store.sessionId, [{ compact: true }]));
        await Promise.all(workers.map((worker) => worker.waitFor((report) => report.ready === true)));
        for (const worker of workers) worker.send("go");
        const reads = await Promise.all(workers.map((worker) => worker.waitFor((report) => "read" in report)));
        expect(reads.map((report) => report.read)).toEqual([expectedBefore, expectedBefore]);
        for (const worker of workers) worker.send("go");
        await Promise.all(workers.map((worker) => worker.finish()));
        const outcomes = workers.map((worker) => worker.reports.find((report) => "compacted" in report || "declined" in report) as Report);
        const winners = outcomes.filter((outcome) => outcome.compacted !== undefined);
        expect(winners).toHaveLength(1);
        const loser = outcomes.find((outcome) => outcome.compacted === undefined) as Report;
        expect(loser.declined).toBe(winners[0]?.compacted);
        const branch = await store.branch();
        expect(branch.compactions).toBe(compactedBefore ? 2 : 1);
        expect(branch.newestCompactionId).toBe(winners[0]?.compacted);
        expect((await store.entries()).length).toBe(count + (compactedBefore ? 2 : 1));
      }),
      { numRuns: 4 },
    );
  });

  it("four processes claiming one session's background compaction at once: exactly one holds it", async () => {
    const store = await freshSession("compaction");
    await store.append([0, 1, 2].map((i) => ({ type: "message", message: { role: "user", content: `m${i}`, timestamp: 1 } }) as never));
    const workers = [0, 1, 2, 3].map(() => new Worker(url, "compaction", store.sessionId, [{ claim: 60_000 }]));
    await Promise.all(workers.map((worker) => worker.waitFor((report) => report.ready === true)));
    for (const worker of workers) worker.send("go");
    await Promise.all(workers.map((worker) => worker.finish()));
    const outcomes = workers.map((worker) => worker.reports.find((report) => "claimed" in report) as Report);
    expect(outcomes.filter((outcome) => outcome.claimed === true)).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.claimed === false).map((outcome) => outcome.reason)).toEqual(["held", "held", "held"]);
    const holder = workers[outcomes.findIndex((outcome) => outcome.claimed === true)] as Worker;
    expect(await store.preparationClaims.current()).toMatchObject({ owner: `pid ${holder.child.pid}`, state: "live" });
  });

  it("the claim of a process killed while it held it is taken over once its lease ran out, never before", async () => {
    const store = await freshSession("compaction");
    await store.append([0, 1].map((i) => ({ type: "message", message: { role: "user", content: `m${i}`, timestamp: 1 } }) as never));
    // It claims, then waits for a line it never gets: killed while it holds the claim.
    const worker = new Worker(url, "compaction", store.sessionId, [{ claim: 1_500 }, { compact: true }]);
    await worker.waitFor((report) => report.ready === true);
    worker.send("go");
    await worker.waitFor((report) => "read" in report);
    worker.child.kill("SIGKILL");
    await worker.exited;
    const branch = await store.branch();
    const request = { owner: "survivor", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 1, leaseMs: 60_000 };
    expect(await store.preparationClaims.claim(request)).toMatchObject({ claimed: false, reason: "held", holder: { owner: `pid ${worker.child.pid}` } });
    const held = await store.preparationClaims.current();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (held?.expiresInMs ?? 0) + 50)));
    expect(await store.preparationClaims.current()).toMatchObject({ state: "expired" });
    expect(await store.preparationClaims.claim(request)).toMatchObject({ claimed: true, claim: { owner: "survivor" } });
    expect((await store.entries()).length).toBe(2);
  });

  it("a process killed in the middle of its compaction transaction leaves the session as it was", async () => {
    const schema = "killed";
    const store = await freshSession(schema);
    await store.append([0, 1, 2].map((i) => ({ type: "message", message: { role: "user", content: `m${i}`, timestamp: 1 } }) as never));
    const before = await store.entries();
    const version = await store.version();
    await admin.query(`
      CREATE FUNCTION ${schema}.wait_for_test() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(4343); RETURN NULL; END $$;
      CREATE TRIGGER wait_for_test AFTER INSERT ON ${schema}.entries FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.wait_for_test();
    `);
    await admin.query("SELECT pg_advisory_lock(4343)");
    const worker = new Worker(url, schema, store.sessionId, [{ compact: true }]);
    await worker.waitFor((report) => report.ready === true);
    worker.send("go");
    await worker.waitFor((report) => "read" in report);
    worker.send("go");
    let pid: number | undefined;
    for (let i = 0; i < 400 && pid === undefined; i++) {
      const rows = (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()")).rows;
      pid = rows[0]?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pid).toBeDefined(); // the compaction's row is inserted, not committed
    worker.child.kill("SIGKILL");
    expect(await worker.exited).toBeNull();
    await admin.query("SELECT pg_advisory_unlock(4343)");
    // The server notices the client is gone when it next talks to it, and rolls back.
    for (let i = 0; i < 400; i++) {
      if ((await admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).rowCount === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await admin.query(`DROP TRIGGER wait_for_test ON ${schema}.entries`);
    expect(await store.version()).toBe(version);
    expect(await store.entries()).toEqual(before);
    const branch = await store.branch();
    expect(branch.compactions).toBe(0);
    // The session goes on: a compaction from the same state is written.
    const retry = await store.appendCompaction({ summary: "s", firstKeptEntryId: before[2]?.id as string, tokensBefore: 1, details: {} as never }, { newestCompactionId: null });
    expect(retry.written).toBe(true);
  });

  it("processes killed at generated moments leave whole writes only", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 6 }), fc.integer({ min: 0, max: 60 }), async (steps, killAfterMs) => {
        const store = await freshSession("compaction");
        const planSteps: Step[] = steps.map((s, i) => (i === 1 ? { compact: true } : { ...s, tag: `k${i}` }));
        const worker = new Worker(url, "compaction", store.sessionId, planSteps);
        await worker.waitFor((report) => report.ready === true);
        worker.send("go");
        worker.send("go"); // the compaction's second line, sent ahead
        await new Promise((resolve) => setTimeout(resolve, killAfterMs));
        worker.child.kill("SIGKILL");
        await worker.exited;
        // Let the server roll back whatever the killed connection had open.
        for (let i = 0; i < 200; i++) {
          const open = (await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'")).rowCount;
          if (open === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        const entries = await store.entries();
        expect(oneChain(entries)).toBe(true);
        // Each append is there whole or not at all, and appends are there in order.
        const present = planSteps.map((s) => (s.tag === undefined ? -1 : entries.filter((entry) => entry.type === "message" && String((entry.message as { content: unknown }).content).startsWith(`${s.tag} `)).length));
        let gone = false;
        planSteps.forEach((s, i) => {
          if (s.append === undefined) return;
          const n = present[i] as number;
          expect([0, s.append]).toContain(n);
          if (gone) expect(n).toBe(0);
          if (n === 0) gone = true;
        });
        const compactions = entries.filter((entry) => entry.type === "compaction");
        expect(compactions.length).toBeLessThanOrEqual(1);
        const branch = await store.branch({ fromBoundary: true });
        expect(branch.compactions).toBe(compactions.length);
      }),
      { numRuns: 4 },
    );
  });
});
