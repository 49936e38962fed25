/**
 * The provider's tokens per token of ours, learned from the usage figures a context already
 * holds. Between two consecutive usage figures the provider counted exactly the messages in
 * between (the tool results, the user's turn and the newer response), so each such pair is a
 * sample of its tokenizer against ours. Claude counts about 1.25x what o200k counts on the real
 * sessions; applying the learned ratio to what no usage figure covers yet keeps thresholds, the
 * usage line and `tokensAfter` in the provider's measure.
 *
 * Robust to outliers (a cache write, an image, a response whose thinking the host did not keep):
 * samples further than 30% from the median sample's ratio are dropped, and the rest fit
 * provider = ratio * counted + perMessage * messages (the provider's framing of each message),
 * from the newest samples of the newest response's model when there are enough of them.
 */
import type { MessageFacts } from "../messages/adapter.js";
import { DEFAULT_ENCODING, tiktokenCounterName } from "./token-counter.js";

/** Where a calibration's ratio comes from. */
export type CalibrationSource =
  /** Learned from pairs of consecutive usage figures in the context. */
  | "usage"
  /** Given by the host (`tokenRatio` in the config or the counter's options). */
  | "config"
  /** The newest response came from a provider whose tokenizer is the counter's (OpenAI's o200k). */
  | "exact"
  /**
   * Learned before the context's last compaction, which recorded it (`CompactionEvent.calibration`,
   * `ContextAnchor.calibration`): the compaction kept fewer than three usable pairs, and no new
   * ones have come since.
   */
  | "compaction"
  /** Nothing to learn from yet: the raw count stands. */
  | "none";

export interface Calibration {
  /** Provider tokens per counted token (1 for `exact` and `none`). */
  readonly ratio: number;
  /**
   * Provider tokens each message adds beyond its text (role and tool-call framing), learned with
   * the ratio; 0 for `config`, `exact` and `none`.
   */
  readonly perMessage: number;
  readonly source: CalibrationSource;
  /** Pairs of consecutive usage figures the ratio rests on (after dropping outliers). */
  readonly samples: number;
  /** The model whose figures were used, when the format records it. */
  readonly model?: string;
}

export interface CalibrationOptions {
  /** A ratio the host knows; it wins over a learned one. */
  readonly knownRatio?: number;
  /**
   * The counter's name (`TokenCounter.name`): the count is exact (ratio 1) for a model whose
   * encoding it is (`modelEncoding`). Default `tiktoken:o200k_base`, the default counter.
   */
  readonly counter?: string;
  /** Newest samples to keep (default 24). */
  readonly maxSamples?: number;
}

/** One pair of consecutive usage figures: what the provider and we counted in between. */
export interface CalibrationSample {
  readonly provider: number;
  readonly counted: number;
  /** Messages in the span. */
  readonly messages: number;
  readonly model: string | undefined;
}

export const NO_CALIBRATION: Calibration = Object.freeze({ ratio: 1, perMessage: 0, source: "none", samples: 0 });

/**
 * A calibration learned from usage figures, as a compaction records it for the context it leaves
 * (`CompactionEvent.calibration`): what the summary and kept messages are measured by until their
 * own usage figures give three pairs again.
 */
export interface RecordedCalibration {
  readonly ratio: number;
  readonly perMessage: number;
  readonly samples: number;
  readonly model?: string;
}

/** What a compaction records of `calibration`: a learned one (from usage, or recorded before), else nothing. */
export function recordedCalibration(calibration: Calibration): RecordedCalibration | undefined {
  if (calibration.source !== "usage" && calibration.source !== "compaction") return undefined;
  const { ratio, perMessage, samples, model } = calibration;
  return { ratio, perMessage, samples, ...(model === undefined ? {} : { model }) };
}

/**
 * `calibration`, or the `recorded` one when the messages gave nothing to learn from (`none`):
 * with source `compaction`. A host's ratio, an exact count and a learned ratio win over it.
 */
export function withRecorded(calibration: Calibration, recorded: RecordedCalibration | undefined): Calibration {
  if (calibration.source !== "none" || recorded === undefined) return calibration;
  return { ratio: recorded.ratio, perMessage: recorded.perMessage, source: "compaction", samples: recorded.samples, ...(recorded.model === undefined ? {} : { model: recorded.model }) };
}

/**
 * A recorded calibration read from a transcript (JSON written by this or an older release, or by
 * hand): undefined unless it is one a calibration could have learned (the ratio within the range
 * learned ratios are clamped to, perMessage 0 or more, samples a whole number).
 */
export function readRecordedCalibration(value: unknown): RecordedCalibration | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { ratio, perMessage, samples, model } = value as Record<string, unknown>;
  if (typeof ratio !== "number" || !(ratio >= MIN_RATIO && ratio <= MAX_RATIO)) return undefined;
  if (typeof perMessage !== "number" || !(perMessage >= 0 && Number.isFinite(perMessage))) return undefined;
  if (typeof samples !== "number" || !Number.isInteger(samples) || samples < 0) return undefined;
  return { ratio, perMessage, samples, ...(typeof model === "string" ? { model } : {}) };
}

/** Fewer inlier samples than this and the ratio is not trusted. */
const MIN_SAMPLES = 3;
/** Spans smaller than this (our count) are too noisy to learn from. */
const MIN_COUNTED = 48;
/** A sample further than this factor from the median is an outlier. */
const INLIER_FACTOR = 1.3;
/** Learned ratios are clamped to this range; anything outside is a broken figure, not a tokenizer. */
const MIN_RATIO = 0.5;
const MAX_RATIO = 3;
const DEFAULT_MAX_SAMPLES = 24;

/**
 * OpenAI's model families that count with o200k (gpt-oss with o200k_harmony, the same on text),
 * by the model's own name: the part after the last `/` (`openrouter/openai/gpt-4o`), after a
 * fine-tune's `ft:`.
 */
const O200K_FAMILY = /^(?:ft:)?(?:gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o1|o3|o4|codex-mini)(?:$|[-.:_])/i;
/** OpenAI's families that count with cl100k. */
const CL100K_FAMILY = /^(?:ft:)?(?:gpt-4(?:$|-)|gpt-3\.5|gpt-35)/i;
/** OpenAI's oldest families (p50k, r50k): their encoding is not told apart here. */
const OLDEST_FAMILY = /^(?:ft:)?(?:text-|davinci|babbage|curie|ada)/i;
/** Providers that serve OpenAI's models (an Azure deployment's name is the user's own). */
const OPENAI_PROVIDER = /^(?:openai|azure-openai|azure|openai-codex)\//i;
const DEFAULT_COUNTER = tiktokenCounterName(DEFAULT_ENCODING);

/**
 * The tiktoken encoding the provider of `model` (`provider/model` as a pi message names it, or the
 * model alone) counts with, when known: an OpenAI family by its name, from any provider; else any
 * model of OpenAI's own providers is taken to be a current one (o200k), but their oldest families.
 */
export function modelEncoding(model: string): string | undefined {
  const name = model.slice(model.lastIndexOf("/") + 1);
  if (O200K_FAMILY.test(name)) return "o200k_base";
  if (CL100K_FAMILY.test(name)) return "cl100k_base";
  return OPENAI_PROVIDER.test(model) && !OLDEST_FAMILY.test(name) ? "o200k_base" : undefined;
}

/** Whether the counter named `counter` (default o200k's) counts exactly what the provider of `model` does. */
export function isExactModel(model: string, counter: string = DEFAULT_COUNTER): boolean {
  const encoding = modelEncoding(model);
  return encoding !== undefined && counter === tiktokenCounterName(encoding);
}

/** `counted` tokens in `messages` messages, in the provider's measure. */
export function providerMeasure(calibration: Calibration, counted: number, messages: number): number {
  return Math.round(counted * calibration.ratio + messages * calibration.perMessage);
}

/**
 * Checks a host-given ratio: a positive finite number. Throws a RangeError naming the value.
 */
export function checkKnownRatio(ratio: number | undefined): number | undefined {
  if (ratio === undefined) return undefined;
  if (!Number.isFinite(ratio) || ratio <= 0) throw new RangeError(`tokenRatio must be a positive number; found ${String(ratio)}.`);
  return ratio;
}

/** The calibration the samples (oldest first) give, following the rules in this file's comment. */
export function calibrationFrom(samples: readonly CalibrationSample[], newestModel: string | undefined, options: CalibrationOptions = {}): Calibration {
  if (options.knownRatio !== undefined) {
    return { ratio: options.knownRatio, perMessage: 0, source: "config", samples: 0, ...(newestModel === undefined ? {} : { model: newestModel }) };
  }
  if (newestModel !== undefined && isExactModel(newestModel, options.counter)) return { ratio: 1, perMessage: 0, source: "exact", samples: 0, model: newestModel };
  const usable = samples.filter((sample) => sample.counted >= MIN_COUNTED && sample.provider > 0);
  const sameModel = newestModel === undefined ? [] : usable.filter((sample) => sample.model === newestModel);
  const pool = sameModel.length >= MIN_SAMPLES ? sameModel : usable;
  const ratios = pool.map((sample) => sample.provider / sample.counted).sort((a, b) => a - b);
  if (ratios.length < MIN_SAMPLES) return NO_CALIBRATION;
  const median = ratios[Math.floor(ratios.length / 2)] as number;
  const inliers = pool.filter((sample) => {
    const ratio = sample.provider / sample.counted;
    return ratio <= median * INLIER_FACTOR && ratio >= median / INLIER_FACTOR;
  });
  if (inliers.length < MIN_SAMPLES) return NO_CALIBRATION;
  const { ratio, perMessage } = fit(inliers);
  return {
    ratio: Math.min(MAX_RATIO, Math.max(MIN_RATIO, ratio)),
    perMessage,
    source: "usage",
    samples: inliers.length,
    ...(pool === sameModel && newestModel !== undefined ? { model: newestModel } : {}),
  };
}

/**
 * Least squares of provider = ratio * counted + perMessage * messages over the samples, with
 * perMessage at least 0 (else the pooled ratio alone).
 */
function fit(samples: readonly CalibrationSample[]): { ratio: number; perMessage: number } {
  let cc = 0;
  let cm = 0;
  let mm = 0;
  let pc = 0;
  let pm = 0;
  let provider = 0;
  let counted = 0;
  for (const sample of samples) {
    cc += sample.counted * sample.counted;
    cm += sample.counted * sample.messages;
    mm += sample.messages * sample.messages;
    pc += sample.provider * sample.counted;
    pm += sample.provider * sample.messages;
    provider += sample.provider;
    counted += sample.counted;
  }
  const pooled = { ratio: provider / counted, perMessage: 0 };
  const determinant = cc * mm - cm * cm;
  if (Math.abs(determinant) < 1e-9 * cc * mm) return pooled;
  const ratio = (pc * mm - pm * cm) / determinant;
  const perMessage = (cc * pm - cm * pc) / determinant;
  if (perMessage < 0 || ratio <= 0) return pooled;
  return { ratio, perMessage };
}

/**
 * Collects samples one message at a time, oldest first (the context manager's incremental
 * count). A summary message starts a new context: a pair across it is no sample.
 */
export class CalibrationSampler {
  readonly #options: CalibrationOptions;
  readonly #max: number;
  #samples: CalibrationSample[] = [];
  #lastUsage: number | undefined;
  #countedSince = 0;
  #messagesSince = 0;
  #spanHasImage = false;
  #newestModel: string | undefined;
  #cached: Calibration | undefined;

  constructor(options: CalibrationOptions = {}) {
    this.#options = options;
    this.#max = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
  }

  reset(): void {
    this.#samples = [];
    this.#lastUsage = undefined;
    this.#countedSince = 0;
    this.#messagesSince = 0;
    this.#spanHasImage = false;
    this.#newestModel = undefined;
    this.#cached = undefined;
  }

  /** Takes the next message: its facts and our count of it. */
  push(facts: MessageFacts, counted: number): void {
    if (facts.kind === "summary") {
      this.#lastUsage = undefined;
      this.#countedSince = 0;
      this.#messagesSince = 0;
      this.#spanHasImage = false;
      return;
    }
    this.#countedSince += counted;
    this.#messagesSince += 1;
    if (facts.imageCount > 0) this.#spanHasImage = true;
    const usage = facts.usageContextTokens;
    if (usage === undefined) return;
    if (this.#lastUsage !== undefined && !this.#spanHasImage) {
      this.#samples.push({ provider: usage - this.#lastUsage, counted: this.#countedSince, messages: this.#messagesSince, model: facts.model });
      if (this.#samples.length > this.#max) this.#samples.shift();
      this.#cached = undefined;
    }
    if (facts.model !== undefined && facts.model !== this.#newestModel) {
      this.#newestModel = facts.model;
      this.#cached = undefined;
    }
    this.#lastUsage = usage;
    this.#countedSince = 0;
    this.#messagesSince = 0;
    this.#spanHasImage = false;
  }

  get calibration(): Calibration {
    this.#cached ??= calibrationFrom(this.#samples, this.#newestModel, this.#options);
    return this.#cached;
  }
}

/**
 * Calibrates from a whole context, reading only as far back as the newest `maxSamples` pairs
 * need (so a long session costs a few recent spans of counting, not the whole history).
 */
export function calibrate<T>(
  messages: readonly T[],
  factsOf: (message: T) => MessageFacts,
  count: (message: T) => number,
  options: CalibrationOptions = {},
): Calibration {
  const max = options.maxSamples ?? DEFAULT_MAX_SAMPLES;
  // Newest first: find where the span of the newest `max` pairs starts, then sample forwards.
  let usages = 0;
  let start = 0;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (factsOf(messages[index] as T).usageContextTokens === undefined) continue;
    usages += 1;
    if (usages > max) {
      start = index;
      break;
    }
  }
  const sampler = new CalibrationSampler(options);
  // Messages before the first usage figure only add to a span no pair closes: skip counting them.
  let seenUsage = false;
  for (let index = start; index < messages.length; index++) {
    const message = messages[index] as T;
    const facts = factsOf(message);
    sampler.push(facts, seenUsage ? count(message) : 0);
    if (facts.usageContextTokens !== undefined) seenUsage = true;
  }
  return sampler.calibration;
}
