// A vitest setup file (vitest.shared.ts): a watchdog for a test that blocks the event loop.
// vitest's testTimeout cannot stop a test stuck in a synchronous loop (its timer never fires), and
// such a test hangs its whole package's run until CI's own limit kills everything, with nothing
// saying which test it was (CI once lost a whole run this way, to a quadratic regular expression).
// A thread beside the test's thread watches a heartbeat the test's event loop writes every second;
// when it has not moved for COMPACTION_WATCHDOG_SECONDS (default 600), it prints the test that was
// running and kills the process, which vitest reports as a failed test file; the rest of the run
// goes on.
import { Worker } from "node:worker_threads";
import { beforeEach } from "vitest";

const LIMIT_SECONDS = Number(process.env.COMPACTION_WATCHDOG_SECONDS ?? 600);
const NAME_BYTES = 2048;
const KEY = Symbol.for("compaction.vitest-watchdog");

/** One watchdog per process: the shared memory the test's thread writes (heartbeat, running test). */
function watchdog() {
  const existing = globalThis[KEY];
  if (existing !== undefined) return existing;
  const shared = new SharedArrayBuffer(8 + 4 + NAME_BYTES);
  const state = { beat: new Float64Array(shared, 0, 1), length: new Int32Array(shared, 8, 1), name: new Uint8Array(shared, 12, NAME_BYTES) };
  state.beat[0] = Date.now();
  setInterval(() => {
    state.beat[0] = Date.now();
  }, 1_000).unref();
  const thread = new Worker(
    `
    const { workerData } = require("node:worker_threads");
    const { writeSync } = require("node:fs");
    const beat = new Float64Array(workerData.shared, 0, 1);
    const length = new Int32Array(workerData.shared, 8, 1);
    const name = new Uint8Array(workerData.shared, 12, ${NAME_BYTES});
    setInterval(() => {
      const blocked = Date.now() - beat[0];
      if (blocked < workerData.limit * 1000) return;
      const test = Buffer.from(name.slice(0, Atomics.load(length, 0))).toString("utf8") || "(before the first test)";
      writeSync(2, "\\nvitest-watchdog: the event loop has been blocked for " + Math.round(blocked / 1000) + " s (COMPACTION_WATCHDOG_SECONDS=" + workerData.limit + ") in: " + test + "\\nvitest-watchdog: a synchronous loop that does not end; killing this test process (pid " + process.pid + ")\\n");
      process.kill(process.pid, "SIGKILL");
    }, Math.min(5_000, workerData.limit * 250));
    `,
    { eval: true, workerData: { shared, limit: LIMIT_SECONDS } },
  );
  thread.unref();
  globalThis[KEY] = state;
  return state;
}

if (LIMIT_SECONDS > 0) {
  const state = watchdog();
  beforeEach((context) => {
    const bytes = Buffer.from(`${context.task.file?.filepath ?? context.task.file?.name ?? "?"} > ${context.task.name}`, "utf8").subarray(0, NAME_BYTES);
    state.name.set(bytes);
    Atomics.store(state.length, 0, bytes.length);
    state.beat[0] = Date.now();
  });
}
