import { createPiAdapter, type PiMessage } from "@compaction/core";
import { loadBoundary } from "@compaction/transcript";
const adapter = createPiAdapter();
const msgs = loadBoundary("/work/main/examples/sessions/pi-large-session.jsonl").messages as PiMessage[];
for (let k = 0; k < 8; k++) {
  const fresh = structuredClone(msgs);
  const t = performance.now();
  for (const m of fresh) adapter.readFacts(m);
  console.log(((performance.now() - t)).toFixed(2), "ms for", fresh.length);
}
