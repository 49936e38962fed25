/**
 * Writes docs/handover-samples.md (see handover-samples-page.ts for what it holds). Run:
 * `cd test && npx tsx bench/handover-samples.ts` (deterministic: the file changes only when the
 * summarizer does; `test/handover-samples.test.ts` fails until it is written again).
 */
import { writeFileSync } from "node:fs";
import { createTiktokenCounter } from "@compaction/core";
import { HANDOVER_SAMPLES_PAGE, handoverSamples } from "./handover-samples-page.js";

const counter = createTiktokenCounter();
writeFileSync(HANDOVER_SAMPLES_PAGE, await handoverSamples(counter));
counter.dispose();
console.log(`wrote ${HANDOVER_SAMPLES_PAGE}`);
