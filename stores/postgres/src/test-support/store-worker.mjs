// A worker process of the multi-process tests (postgres-store.processes.test.ts): opens one
// session of the Postgres store, waits for "go" on stdin (so two workers start together), runs
// its plan, and reports each step's outcome as a JSON line on stdout.
//
//   node store-worker.mjs <connection string> <schema> <session> <plan as JSON>
//
// Plan steps: { "append": <count>, "tag": "<text>", "pauseMs": <ms> } appends <count> user
// messages "<tag> <i>" in one call; { "compact": true } reads the branch and appends a compaction
// keeping its last entry, expecting the newest compaction it read; between the read and the
// write it reports { read } and waits for another line on stdin; { "claim": <lease ms> } claims
// the session's background compaction from the branch it reads, reporting { claimed, reason }.
import { createInterface } from "node:readline";
import { openPostgresStore } from "@compaction/store-postgres";

const [url, schema, session, planText] = process.argv.slice(2);
const plan = JSON.parse(planText);
const store = await openPostgresStore({ connectionString: url, schema, session });
const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const input = createInterface({ input: process.stdin });
const lines = input[Symbol.asyncIterator]();
const nextLine = () => lines.next();
report({ ready: true });
await nextLine();
for (const step of plan) {
  if (step.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, step.pauseMs));
  if (step.append !== undefined) {
    const entries = Array.from({ length: step.append }, (_, i) => ({
      type: "message",
      message: { role: "user", content: `${step.tag} ${i}`, timestamp: Date.now() },
    }));
    const written = await store.append(entries);
    report({ appended: written.map((entry) => entry.id) });
  } else if (step.claim !== undefined) {
    const branch = await store.branch();
    const outcome = await store.preparationClaims.claim({ owner: `pid ${process.pid}`, baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 1, leaseMs: step.claim });
    report({ claimed: outcome.claimed, reason: outcome.claimed ? null : outcome.reason });
  } else if (step.compact) {
    const branch = await store.branch();
    const kept = branch.leafId;
    // Both workers read before either writes: the parent says "go" once both have read.
    report({ read: branch.newestCompactionId });
    await nextLine();
    const result = await store.appendCompaction(
      { summary: `summary by ${process.pid}`, firstKeptEntryId: kept, tokensBefore: 100, details: { by: process.pid } },
      { newestCompactionId: branch.newestCompactionId },
    );
    report(result.written ? { compacted: result.entry.id } : { declined: result.newestCompactionId });
  }
}
await store.close();
input.close();
process.stdin.destroy();
report({ done: true });
