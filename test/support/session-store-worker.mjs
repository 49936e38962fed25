/**
 * A child process for test/session-stores-concurrency.test.ts: one worker of a service writing
 * to a session in a SQLite database or a pi file through @compaction/transcript (the built dist).
 *
 *   node session-store-worker.mjs '<spec as JSON>'
 *
 * spec: { store: "sqlite" | "pi-file", file, session?, name, mode, plan?, go?, firstKept? }
 * - mode "append": for each { size, delayMs } of `plan`, waits delayMs, appends `size` user
 *   messages `<name>:<batch>:<j>` in one append, then prints `ok <id> <id>...` (after the append
 *   returned: an id printed is committed).
 * - mode "compact": reads the branch, prints `ready`, waits until the file `go` exists, then
 *   appends a compaction keeping from `firstKept`, conditional on the newest compaction it read;
 *   prints `written <id>` or `lost <newest compaction id>`.
 * - mode "hang-in-compaction": appends a compaction but stops inside the write (SQLite: in the
 *   transaction, before COMMIT; pi file: under the lock, before the line is written), prints
 *   `inside` and waits there until it is killed.
 */
import { existsSync } from "node:fs";
import { openPiFileStore, openSqliteStore } from "@compaction/transcript";

const spec = JSON.parse(process.argv[2] ?? "{}");
const { storeFailpoints } = await import(new URL("./store/store-failpoints.js", import.meta.resolve("@compaction/transcript")).href);
const store =
  spec.store === "sqlite"
    ? await openSqliteStore({ file: spec.file, session: spec.session, busyTimeoutMs: 60_000 })
    : await openPiFileStore(spec.file, { lock: { staleMs: 2_000, timeoutMs: 60_000 } });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const compaction = (name) => ({
  summary: `Summary by ${spec.name}`,
  firstKeptEntryId: spec.firstKept,
  tokensBefore: 1000,
  details: { type: "compaction", strategy: "test", summary: `Summary by ${name}`, warnings: [] },
});

if (spec.mode === "append") {
  let batch = 0;
  for (const { size, delayMs } of spec.plan) {
    if (delayMs > 0) await sleep(delayMs);
    const entries = Array.from({ length: size }, (_, j) => ({
      type: "message",
      message: { role: "user", content: `${spec.name}:${batch}:${j}`, timestamp: Date.now() },
    }));
    const written = await store.append(entries);
    process.stdout.write(`ok ${written.map((entry) => entry.id).join(" ")}\n`);
    batch += 1;
  }
} else if (spec.mode === "compact") {
  const branch = await store.branch({ fromBoundary: true });
  process.stdout.write("ready\n");
  while (!existsSync(spec.go)) await sleep(1);
  const write = await store.appendCompaction(compaction(spec.name), { newestCompactionId: branch.newestCompactionId });
  process.stdout.write(write.written ? `written ${write.entry.id}\n` : `lost ${write.newestCompactionId}\n`);
} else if (spec.mode === "hang-in-compaction") {
  const branch = await store.branch({ fromBoundary: true });
  const wait = new Int32Array(new SharedArrayBuffer(4));
  storeFailpoints.beforeCommit = () => {
    process.stdout.write("inside\n");
    for (;;) Atomics.wait(wait, 0, 0, 1_000);
  };
  await store.appendCompaction(compaction(spec.name), { newestCompactionId: branch.newestCompactionId });
  process.stdout.write("not killed\n");
} else {
  process.stderr.write(`unknown mode ${spec.mode}\n`);
  process.exit(2);
}
await store.close();
