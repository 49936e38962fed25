// A worker process for context-manager.processes.test.ts: a context manager on one session in a
// SQLite database (the built packages), appending `count` messages of its own and checking the
// threshold after each, as a service worker would. Prints what it did as one JSON line.
import { Compactor, createEstimateCounter, createPiAdapter, findCutPoint } from "@compaction/core";
import { openSqliteStore } from "@compaction/transcript";
import { createContextManager } from "../../dist/index.js";

const [file, session, name, count] = process.argv.slice(2);
const keepRecent = {
  name: "keep-recent",
  apply(compactor) {
    compactor.hooks.selectCut.tap("keep-recent", (run) => findCutPoint(run.view, { keepRecentTokens: 200 }));
    compactor.hooks.summarize.tap("keep-recent", (draft) => ({ ...draft, text: `summary by ${name}` }));
  },
};
const compactor = new Compactor({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [keepRecent], contextWindow: 1000, reserveTokens: 0, autoCompact: { enabled: true, threshold: 0.8 } });
const store = await openSqliteStore({ file, session });
const manager = await createContextManager({ compactor, store });
let compacted = 0;
let superseded = 0;
manager.on("warning", (event) => {
  if (event.kind === "compaction-superseded") superseded += 1;
});
for (let i = 0; i < Number(count); i++) {
  await manager.append({ role: "user", content: [{ type: "text", text: `${name}-${i} ${"word ".repeat(40)}` }], timestamp: Date.now() });
  const result = await manager.check();
  if (result?.status === "compacted") compacted += 1;
}
await manager.dispose();
await store.close();
process.stdout.write(`${JSON.stringify({ name, compacted, superseded })}\n`);
