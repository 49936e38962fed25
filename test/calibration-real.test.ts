/**
 * Token calibration (core/src/tokens/calibration.ts) on the real transcripts: the provider's
 * figures predicted from our count of what came between them.
 */
import { afterAll, describe, expect, it } from "vitest";
import {
  calibrate,
  createAnthropicAdapter,
  createEstimateCounter,
  createPiAdapter,
  createTiktokenCounter,
  FactsCache,
  MessageTokenCounter,
  type PiMessage,
  providerMeasure,
} from "@compaction/core";
import { CLAUDE_FIXTURES, loadClaudeMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";

describe("calibrate on the real transcripts", () => {
  const counter = createTiktokenCounter();
  afterAll(() => counter.dispose());
  // Predict each usage figure from the one before it plus our calibrated count of what came
  // between, with the ratio learned from the figures before it only, as a host has it then.
  function pooledError<T>(messages: readonly T[], tokens: MessageTokenCounter<T>): { raw: number; calibrated: number } {
    let actual = 0;
    let raw = 0;
    let calibrated = 0;
    let previous: number | undefined;
    let previousIndex = 0;
    for (let index = 0; index < messages.length; index++) {
      const facts = tokens.facts.of(messages[index] as T);
      if (facts.kind === "summary") previous = undefined;
      const usage = facts.usageContextTokens;
      if (usage === undefined) continue;
      const span = messages.slice(previousIndex + 1, index + 1);
      if (previous !== undefined && usage > previous && !span.some((m) => tokens.facts.of(m).imageCount > 0)) {
        const calibration = tokens.calibration(messages.slice(0, previousIndex + 1));
        const counted = tokens.total(span);
        actual += usage - previous;
        raw += counted;
        calibrated += providerMeasure(calibration, counted, span.length);
      }
      previous = usage;
      previousIndex = index;
    }
    return { raw: raw / actual - 1, calibrated: calibrated / actual - 1 };
  }

  it.each(PI_FIXTURES)("brings the pooled error between usage figures within 5 per cent (o200k): %s", (file) => {
    const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), counter);
    const error = pooledError(loadPiMessages(file), tokens);
    expect(Math.abs(error.calibrated)).toBeLessThan(0.05);
    expect(Math.abs(error.calibrated)).toBeLessThan(Math.abs(error.raw));
  });

  it("brings the pooled error within 5% on the Claude Code transcripts together", () => {
    let actual = 0;
    let predicted = 0;
    for (const file of CLAUDE_FIXTURES) {
      const tokens = new MessageTokenCounter(new FactsCache(createAnthropicAdapter()), createEstimateCounter());
      const messages = loadClaudeMessages(file);
      // Weight each file by its own provider total: the error is relative.
      const error = pooledError(messages, tokens);
      const total = messages.reduce((sum, m) => Math.max(sum, tokens.facts.of(m).usageContextTokens ?? 0), 0);
      actual += total;
      predicted += total * (1 + error.calibrated);
    }
    expect(Math.abs(predicted / actual - 1)).toBeLessThan(0.05);
  });

  it("learns a ratio on a real pi session and reads only the newest spans to do it", () => {
    const messages = loadPiMessages(PI_FIXTURES[0] as string);
    const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
    let counted = 0;
    const calibration = calibrate(messages, (m) => tokens.facts.of(m), (m) => {
      counted += 1;
      return tokens.count(m);
    });
    expect(calibration.source).toBe("usage");
    expect(calibration.ratio).toBeGreaterThan(1);
    expect(calibration.model).toMatch(/\//);
    expect(counted).toBeLessThan(messages.length / 4);
  });

  it("scales what follows the newest usage figure in contextTokens", () => {
    const messages: PiMessage[] = loadPiMessages(PI_FIXTURES[0] as string);
    const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
    const size = tokens.contextTokens(messages);
    expect(size.calibration.source).toBe("usage");
    const trailing = messages.length - (size.lastUsageIndex ?? 0) - 1;
    expect(size.tokens).toBe(size.usageTokens + providerMeasure(size.calibration, size.trailingTokens, trailing));
  });
});
