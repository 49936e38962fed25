import { describe, expect, it } from "vitest";
import { resolveLayeredOptions } from "./layered.js";
import { chooseSummaryLayer, shouldPrune } from "./layers.js";

const defaults = resolveLayeredOptions();

describe("shouldPrune", () => {
  it.each([
    { ratio: 0.8, tools: 60000, prunes: false, why: "context exactly at pruneThreshold" },
    { ratio: 0.8001, tools: 60000, prunes: true, why: "context just above pruneThreshold" },
    { ratio: 0.9, tools: 50000, prunes: false, why: "tool outputs exactly pruneMinToolTokens" },
    { ratio: 0.9, tools: 50001, prunes: true, why: "tool outputs one token above pruneMinToolTokens" },
    { ratio: 0.5, tools: 500000, prunes: false, why: "huge tool outputs in a small context" },
  ])("$why: $prunes", ({ ratio, tools, prunes }) => {
    expect(shouldPrune(ratio, tools, defaults)).toBe(prunes);
  });
});

describe("chooseSummaryLayer", () => {
  it.each([
    { ratio: 0.88, trigger: "auto", layer: undefined, why: "auto, exactly at summarizeThreshold" },
    { ratio: 0.8801, trigger: "auto", layer: "summarize", why: "auto, just above summarizeThreshold" },
    { ratio: 0.95, trigger: "auto", layer: "summarize", why: "auto, exactly at fullThreshold" },
    { ratio: 0.9501, trigger: "auto", layer: "full", why: "auto, just above fullThreshold" },
    { ratio: 1.4, trigger: "auto", layer: "full", why: "auto, over the window" },
    { ratio: 0.1, trigger: "manual", layer: "summarize", why: "manual, below every threshold" },
    { ratio: 0.96, trigger: "manual", layer: "full", why: "manual, above fullThreshold" },
  ] as const)("$why: $layer", ({ ratio, trigger, layer }) => {
    expect(chooseSummaryLayer(ratio, trigger, defaults)).toBe(layer);
  });
});
