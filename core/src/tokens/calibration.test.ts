import { describe, expect, it } from "vitest";
import type { MessageFacts } from "../messages/adapter.js";
import { buildFacts } from "../messages/message-fields.js";
import {
  calibrationFrom,
  type CalibrationSample,
  CalibrationSampler,
  isExactModel,
  modelEncoding,
  NO_CALIBRATION,
  providerMeasure,
  readRecordedCalibration,
  recordedCalibration,
  withRecorded,
} from "./calibration.js";

const sample = (counted: number, ratio: number, messages = 2, perMessage = 0, model?: string): CalibrationSample => ({
  provider: Math.round(counted * ratio + messages * perMessage),
  counted,
  messages,
  model,
});

describe("calibrationFrom", () => {
  it("learns the provider's ratio from pairs of usage figures", () => {
    const calibration = calibrationFrom([sample(1000, 1.25), sample(400, 1.25), sample(2500, 1.25)], undefined);
    expect(calibration.source).toBe("usage");
    expect(calibration.ratio).toBeCloseTo(1.25, 2);
    expect(calibration.samples).toBe(3);
  });

  it("learns the provider's framing per message beside the ratio", () => {
    const samples = [sample(1000, 1.2, 2, 10), sample(300, 1.2, 6, 10), sample(2000, 1.2, 1, 10), sample(50, 1.2, 4, 10)];
    const calibration = calibrationFrom(samples, undefined);
    expect(calibration.ratio).toBeCloseTo(1.2, 2);
    expect(calibration.perMessage).toBeCloseTo(10, 0);
  });

  it("drops an outlier (a cache write, an image the host did not record) instead of following it", () => {
    const calibration = calibrationFrom([sample(1000, 1.3), sample(900, 1.3), sample(1100, 1.3), sample(1000, 6)], undefined);
    expect(calibration.ratio).toBeCloseTo(1.3, 2);
    expect(calibration.samples).toBe(3);
  });

  it("trusts no ratio from fewer than three usable pairs: the raw count stands", () => {
    expect(calibrationFrom([sample(1000, 1.3), sample(900, 1.3)], undefined)).toEqual(NO_CALIBRATION);
    // Spans too small to learn from are not usable.
    expect(calibrationFrom([sample(10, 1.3), sample(20, 1.3), sample(30, 1.3)], undefined)).toEqual(NO_CALIBRATION);
  });

  it("learns from the newest response's model when it has enough pairs of its own", () => {
    const samples = [sample(1000, 1.0, 2, 0, "a/old"), sample(1000, 1.0, 2, 0, "a/old"), sample(1000, 1.0, 2, 0, "a/old")];
    samples.push(sample(1000, 1.3, 2, 0, "b/new"), sample(800, 1.3, 2, 0, "b/new"), sample(900, 1.3, 2, 0, "b/new"));
    const calibration = calibrationFrom(samples, "b/new");
    expect(calibration.ratio).toBeCloseTo(1.3, 2);
    expect(calibration.model).toBe("b/new");
  });

  it("uses the host's known ratio over a learned one", () => {
    const calibration = calibrationFrom([sample(1000, 1.3), sample(900, 1.3), sample(1100, 1.3)], undefined, { knownRatio: 1.1 });
    expect(calibration).toMatchObject({ ratio: 1.1, source: "config", perMessage: 0 });
  });

  it("keeps the count exact for OpenAI's models, whose tokenizer is the counter's", () => {
    const calibration = calibrationFrom([sample(1000, 1.3), sample(900, 1.3), sample(1100, 1.3)], "openai/gpt-4o");
    expect(calibration).toMatchObject({ ratio: 1, perMessage: 0, source: "exact" });
  });

  it("knows OpenAI's o200k models by name from any provider, and not OpenAI's older ones", () => {
    const exact = [
      "openai/gpt-4o",
      "openai/gpt-4o-mini-2024-07-18",
      "openai/gpt-5.1-codex",
      "openai-codex/gpt-5-codex",
      "openrouter/openai/gpt-4o",
      "openrouter/openai/gpt-oss-120b",
      "github-copilot/gpt-4.1",
      "azure-openai/my-deployment",
      "gpt-4o-2024-08-06",
      "chatgpt-4o-latest",
      "gpt-4.5-preview",
      "o3-mini",
      "o1",
      "o4-mini-high",
      "codex-mini-latest",
      "ft:gpt-4o-mini-2024-07-18:org::abc123",
    ];
    for (const model of exact) expect(isExactModel(model), model).toBe(true);
    const calibrated = [
      "anthropic/claude-sonnet-4-5",
      "openai/gpt-4",
      "openai/gpt-4-turbo",
      "openai/gpt-3.5-turbo",
      "azure/gpt-35-turbo",
      "openrouter/anthropic/claude-opus-4",
      "google/gemini-2.5-pro",
      "groq/llama-3.3-70b",
      "o1x-model",
      "gpt-4",
      "model-o3",
    ];
    for (const model of calibrated) expect(isExactModel(model), model).toBe(false);
    const samples = [sample(1000, 1.3), sample(900, 1.3), sample(1100, 1.3)];
    expect(calibrationFrom(samples, "openrouter/openai/gpt-4o").source).toBe("exact");
    expect(calibrationFrom(samples, "openai/gpt-4").source).toBe("usage");
  });

  it("is exact only when the counter's encoding is the model's", () => {
    expect(modelEncoding("openai/gpt-4-turbo")).toBe("cl100k_base");
    expect(modelEncoding("openai/gpt-4o")).toBe("o200k_base");
    expect(modelEncoding("openai/text-davinci-003")).toBeUndefined();
    expect(modelEncoding("anthropic/claude-sonnet-4-5")).toBeUndefined();
    const samples = [sample(1000, 1.3), sample(900, 1.3), sample(1100, 1.3)];
    // A cl100k counter counts gpt-4 exactly, and gpt-4o not.
    expect(calibrationFrom(samples, "openai/gpt-4", { counter: "tiktoken:cl100k_base" }).source).toBe("exact");
    expect(calibrationFrom(samples, "openai/gpt-4o", { counter: "tiktoken:cl100k_base" }).source).toBe("usage");
    // chars/4 is exact for no one: its ratio is learned even for OpenAI's models.
    const estimated = calibrationFrom(samples, "openai/gpt-4o", { counter: "estimate:chars/4" });
    expect(estimated.source).toBe("usage");
    expect(estimated.ratio).toBeCloseTo(1.3, 2);
  });

  it("gives counts in the provider's measure", () => {
    expect(providerMeasure({ ratio: 1.25, perMessage: 4, source: "usage", samples: 3 }, 1000, 5)).toBe(1270);
    expect(providerMeasure(NO_CALIBRATION, 1000, 5)).toBe(1000);
  });
});

describe("a calibration a compaction records", () => {
  const model = "anthropic/claude-sonnet-4-5";
  const learned = calibrationFrom([sample(1000, 1.25, 2, 10, model), sample(400, 1.25, 6, 10, model), sample(2500, 1.25, 1, 10, model)], model);

  it("is recorded when learned from usage figures (or carried from an earlier compaction), not for a host's ratio, an exact count or none", () => {
    expect(recordedCalibration(learned)).toEqual({ ratio: learned.ratio, perMessage: learned.perMessage, samples: 3, model: "anthropic/claude-sonnet-4-5" });
    expect(recordedCalibration(withRecorded(NO_CALIBRATION, recordedCalibration(learned)))).toEqual(recordedCalibration(learned));
    expect(recordedCalibration(calibrationFrom([], undefined, { knownRatio: 1.3 }))).toBeUndefined();
    expect(recordedCalibration(calibrationFrom([], "openai/gpt-4o"))).toBeUndefined();
    expect(recordedCalibration(NO_CALIBRATION)).toBeUndefined();
  });

  it("stands only where the messages give nothing to learn from, with source 'compaction'", () => {
    const recorded = { ratio: 1.29, perMessage: 10, samples: 16, model: "anthropic/claude-opus-4-5" };
    expect(withRecorded(NO_CALIBRATION, recorded)).toEqual({ ...recorded, source: "compaction" });
    expect(withRecorded(NO_CALIBRATION, undefined)).toBe(NO_CALIBRATION);
    expect(withRecorded(learned, recorded)).toBe(learned);
    const known = calibrationFrom([], undefined, { knownRatio: 1.4 });
    expect(withRecorded(known, recorded)).toBe(known);
    const exact = calibrationFrom([], "openai/gpt-4o");
    expect(withRecorded(exact, recorded)).toBe(exact);
  });

  it("is read back from a transcript only when it is one a calibration could have learned", () => {
    const recorded = { ratio: 1.29, perMessage: 10.3, samples: 16, model: "anthropic/claude-opus-4-5" };
    expect(readRecordedCalibration(JSON.parse(JSON.stringify(recorded)))).toEqual(recorded);
    expect(readRecordedCalibration({ ratio: 1.29, perMessage: 0, samples: 3 })).toEqual({ ratio: 1.29, perMessage: 0, samples: 3 });
    for (const bad of [undefined, null, "1.29", [], { ratio: 9, perMessage: 0, samples: 3 }, { ratio: 0.1, perMessage: 0, samples: 3 }, { ratio: 1.2, perMessage: -1, samples: 3 }, { ratio: 1.2, perMessage: 0, samples: 2.5 }, { ratio: 1.2, samples: 3 }, { ratio: Number.NaN, perMessage: 0, samples: 3 }]) {
      expect(readRecordedCalibration(bad)).toBeUndefined();
    }
  });
});

describe("CalibrationSampler", () => {
  const facts = (kind: MessageFacts["kind"], usage?: number, imageCount = 0): MessageFacts =>
    buildFacts({ kind, pinned: false, imageCount, ...(usage === undefined ? {} : { usageContextTokens: usage }) });

  it("takes no pair across a summary (the context started again)", () => {
    const sampler = new CalibrationSampler();
    sampler.push(facts("assistant", 10_000), 100);
    sampler.push(facts("summary"), 200);
    for (let i = 1; i <= 2; i++) {
      sampler.push(facts("user"), 100);
      sampler.push(facts("assistant", 1000 + i * 250), 100);
    }
    // One pair after the summary, none across it: not enough to trust.
    expect(sampler.calibration).toEqual(NO_CALIBRATION);
    for (let i = 3; i <= 4; i++) {
      sampler.push(facts("user"), 100);
      sampler.push(facts("assistant", 1000 + i * 250), 100);
    }
    expect(sampler.calibration).toMatchObject({ source: "usage", samples: 3 });
    expect(sampler.calibration.ratio).toBeCloseTo(1.25, 2);
  });

  it("takes no pair over a span with an image (its cost is the provider's own)", () => {
    const sampler = new CalibrationSampler();
    sampler.push(facts("assistant", 1000), 100);
    for (let i = 1; i <= 3; i++) {
      sampler.push(facts("user", undefined, 1), 100);
      sampler.push(facts("assistant", 1000 + i * 5000), 100);
    }
    expect(sampler.calibration).toEqual(NO_CALIBRATION);
  });
});
