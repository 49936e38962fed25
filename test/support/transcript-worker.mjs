/**
 * A child process for test/transcript-concurrency.test.ts: appends user messages to one session
 * file through @compaction/transcript (the built dist), as a second agent or CLI would.
 *
 *   node transcript-worker.mjs <session path> <worker name> <appends | "forever"> [staleMs] [bigMiB]
 *
 * After each append has resolved (written and fsynced), prints `ok <id> <id>...` on one line.
 * stdout to a pipe is synchronous on Linux, so an id printed is an entry that was on disk before
 * the print; a SIGKILL can only lose entries that were never acknowledged.
 *
 * In "forever" mode the batches hold 1 to 3 entries, and every third batch starts with an entry
 * carrying `bigMiB` MiB of text (default 4), so one `write` takes long enough for a kill to land
 * in it. Before such a batch the worker prints `big <file size before the append>`.
 */
import { statSync } from "node:fs";
import { appendEntries } from "@compaction/transcript";

const [path, worker, appends, staleArg, bigArg] = process.argv.slice(2);
if (path === undefined || worker === undefined || appends === undefined) {
  process.stderr.write("usage: transcript-worker.mjs <session path> <worker name> <appends | forever> [staleMs] [bigMiB]\n");
  process.exit(2);
}
const forever = appends === "forever";
const total = forever ? Number.POSITIVE_INFINITY : Number(appends);
const lock = { staleMs: staleArg === undefined ? 10_000 : Number(staleArg), timeoutMs: 60_000 };
const BIG = "x".repeat(Math.round(Number(bigArg ?? 4) * (1 << 20)));

for (let i = 0; i < total; i++) {
  const size = forever ? 1 + (i % 3) : 1;
  const big = forever && i % 3 === 2;
  const entries = Array.from({ length: size }, (_, j) => ({
    type: "message",
    message: { role: "user", content: `${worker}:${i}:${j}${big && j === 0 ? ` ${BIG}` : ""}`, timestamp: Date.now() },
  }));
  if (big) process.stdout.write(`big ${statSync(path).size}\n`);
  const written = await appendEntries(path, entries, { lock });
  process.stdout.write(`ok ${written.map((entry) => entry.id).join(" ")}\n`);
}
