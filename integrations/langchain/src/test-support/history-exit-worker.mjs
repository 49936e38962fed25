// A process for compaction-history.background.test.ts: compactionHistory (the built package) on a
// thread in a SQLite file, with the project's model summarizer (the test's held server). One run
// takes the thread past the prepare mark, so a compaction starts and is held; the worker prints
// "ran", the test lets the summary answer, and the worker waits until the store left open for it
// is closed, prints what it saw as JSON, and returns without calling close(): nothing it left
// behind (a store, a claim's renewal timer, a request) may keep the process from exiting.
//
//   node history-exit-worker.mjs <file> <project dir> <thread id>
import { openSqliteStore } from "@compaction/transcript";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { compactionHistory } from "../../dist/thread/index.js";

const [file, cwd, threadId] = process.argv.slice(2);
const stores = { opened: 0, closed: 0 };
const events = [];
const history = compactionHistory({
  cwd,
  agent: "auditor",
  on: (event) => {
    if (event.type === "background") events.push(event.background.type);
  },
  openStore: async (id) => {
    const store = await openSqliteStore({ file, session: id, create: { cwd } });
    stores.opened += 1;
    const close = store.close.bind(store);
    return Object.assign(store, { close: () => ((stores.closed += 1), close()) });
  },
});

const chatter = (turn) => Array.from({ length: 24 }, (_, line) => `Turn ${turn} note ${line}: the build of service-${turn}-${line} passed on runner ${(turn * 7 + line) % 13}.`).join(" ");
const input = [];
for (let turn = 0; turn < 10; turn++) {
  input.push(new HumanMessage({ id: `h-${turn}`, content: chatter(turn) }));
  if (turn < 9) input.push(new AIMessage({ id: `a-${turn}`, content: `Noted turn ${turn}.` }));
}
const agent = createAgent({ model: fakeModel().respond(new AIMessage("Noted.")), tools: [history.memorySearch], middleware: [history.middleware] });
await agent.invoke({ messages: input }, { configurable: { thread_id: threadId } });
process.stdout.write("ran\n");

while (stores.closed < stores.opened) await new Promise((resolve) => setTimeout(resolve, 10));
const check = await openSqliteStore({ file, session: threadId });
const claim = (await check.preparationClaims?.current()) ?? null;
await check.close();
// Timers that would keep the process alive (a claim's renewal timer is unref'd: `claim` says it was released).
const timers = process.getActiveResourcesInfo().filter((resource) => resource === "Timeout").length;
process.stdout.write(JSON.stringify({ ...stores, claim, timers, events }));
