// A worker process for context-manager.claims.processes.test.ts: the real context manager (the
// built package) over one session in a SQLite database file, with background compaction on and
// a model-like summarizer whose every summary takes <summary ms>. After "go" on stdin it appends
// a turn of its own every <pace ms> and checks the context after each, as a service worker
// would, until it sees a compaction in the session (or <max turns>). Then it prints what it did
// as one JSON line.
//
//   node background-claim-worker.mjs <file> <session> <name> <summary ms> <pace ms> <max turns> <claims|no-claims>
//
// `no-claims` hides the store's preparationClaims from the manager: the control without the claim.
import { createInterface } from "node:readline";
import { Compactor, createEstimateCounter, createPiAdapter, PREPARE_SHARE } from "@compaction/core";
import { keepRecent } from "@compaction/core/testing";
import { openSqliteStore } from "@compaction/transcript";
import { createContextManager } from "../../dist/index.js";

const [file, session, name, summaryMs, paceMs, maxTurns, mode] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let summaries = 0;
/** A model's summary: it takes `summaryMs`, and stops when the compaction is cancelled. */
const slowModel = {
  name: "slow-model",
  async summarize(request) {
    summaries += 1;
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, Number(summaryMs));
      request.signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(request.signal.reason ?? new Error("aborted"));
      }, { once: true });
    });
    return `## Goal\n- summary written by ${name}`;
  },
};

const compactor = new Compactor({ summarizer: slowModel, adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [keepRecent(600)], contextWindow: 4_000, reserveTokens: 400 });
const opened = await openSqliteStore({ file, session });
const store =
  mode === "no-claims"
    ? new Proxy(opened, {
        get(target, property) {
          if (property === "preparationClaims") return undefined;
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      })
    : opened;
const manager = await createContextManager({ compactor, store, worker: name, waitMs: 20_000 });

const report = { name, starts: 0, applied: 0, foreground: 0, claimedElsewhere: [], dropped: [], superseded: 0, errors: [], summaries: 0, turns: 0, sawCompaction: false, maxTokens: 0, coldMark: null };
manager.on("background", (event) => {
  if (event.type === "start") report.starts += 1;
  if (event.type === "claimed-elsewhere") report.claimedElsewhere.push(event.owner);
  if (event.type === "dropped") report.dropped.push(event.cost.why);
});
manager.on("compaction-end", (event) => {
  if (event.result.status !== "compacted") return;
  if (preparedStart) report.applied += 1;
  else report.foreground += 1;
});
let preparedStart = false;
manager.on("compaction-start", (event) => {
  preparedStart = event.prepared !== undefined;
});
manager.on("warning", (event) => {
  if (event.kind === "compaction-superseded") report.superseded += 1;
});
manager.on("error", (event) => report.errors.push(event.error.message));

const input = createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
await lines.next();

const filler = "word ".repeat(20);
for (let i = 0; i < Number(maxTurns); i++) {
  await manager.append([
    { role: "user", content: [{ type: "text", text: `${name}-${i} asks ${filler}` }], timestamp: Date.now() },
    { role: "assistant", content: [{ type: "text", text: `${name}-${i} answers ${filler}` }], api: "x", provider: "x", model: "m", usage: {}, stopReason: "stop", timestamp: Date.now() },
  ]);
  report.turns += 1;
  await manager.check();
  report.maxTokens = Math.max(report.maxTokens, manager.tokens);
  if (manager.compactions > 0) {
    report.sawCompaction = true;
    break;
  }
  await sleep(Number(paceMs));
}
await manager.idle();
report.summaries = summaries;
// The least prepare mark (where the first preparation of a session starts).
report.coldMark = Math.floor(PREPARE_SHARE * manager.threshold);
await manager.dispose();
await opened.close();
input.close();
process.stdin.destroy();
process.stdout.write(`${JSON.stringify(report)}\n`);
