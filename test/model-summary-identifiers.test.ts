/**
 * Issue 31: the no-model (extractive) summary keeps at least 75% of the identifiers of pi's two
 * real model summaries in pi-before-compaction.jsonl (those that occur in the span), within 2,500
 * tokens; the measure is the fidelity benchmark's (test/bench/fidelity/model-summaries.ts).
 */
import { createTiktokenCounter } from "@compaction/core";
import { afterAll, expect, it } from "vitest";
import { measureSummary, modelSummaryCases, ourSummaries, spanText } from "./bench/fidelity/model-summaries.js";

const counter = createTiktokenCounter();
afterAll(() => counter.dispose?.());

it("keeps at least 75% of each real model summary's identifiers in at most 2,500 tokens", async () => {
  const cases = modelSummaryCases();
  expect(cases).toHaveLength(2);
  const ours = await ourSummaries(cases, counter);
  cases.forEach((one, index) => {
    const measure = measureSummary(ours[index] ?? "", one.modelSummary, spanText(one.messages), counter);
    expect(measure.identifiersKept / measure.identifiersTotal, `${one.label}: missed ${measure.missed.join(", ")}`).toBeGreaterThanOrEqual(0.75);
    expect(measure.tokens, one.label).toBeLessThanOrEqual(2500);
  });
}, 60_000);
