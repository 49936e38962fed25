/**
 * docs/handover-samples.md is what its script writes on today's extractive summarizer: a change to
 * the summarizer that changes a sample fails here until `cd test && npx tsx bench/handover-samples.ts`
 * writes the page again.
 */
import { readFileSync } from "node:fs";
import { createTiktokenCounter } from "@compaction/core";
import { afterAll, expect, it } from "vitest";
import { HANDOVER_SAMPLES_PAGE, handoverSamples } from "./bench/handover-samples-page.js";

const counter = createTiktokenCounter();
afterAll(() => counter.dispose());

it("docs/handover-samples.md is what bench/handover-samples.ts writes today", async () => {
  const page = readFileSync(HANDOVER_SAMPLES_PAGE, "utf8");
  expect(page, "docs/handover-samples.md is out of date: run `cd test && npx tsx bench/handover-samples.ts`").toBe(await handoverSamples(counter));
});
