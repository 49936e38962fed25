/**
 * The calibration a compaction records, on the real pi session whose newest turn is large
 * (pi-before-compaction.jsonl): safeguard keeps only that turn, so the compacted context holds no
 * pair of usage figures to learn Claude's ratio from. The compaction records the ratio it measured
 * with (the event's `calibration`), and what is appended after it is counted in the provider's
 * measure by it, in memory (the context manager) and from the session file (the anchor
 * `compactionAnchor` reads), until the kept messages' own figures give enough pairs. Before, those
 * messages were counted raw, about 22% under Claude's count.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Compactor, createCompactor, type PiMessage, providerMeasure } from "@compaction/core";
import { createContextManager } from "@compaction/context-manager";
import { loadPiMessages } from "@compaction/fixtures";
import { appendCompaction, appendEntries, compactionAnchor, createSession, loadBoundary } from "@compaction/transcript";
import { afterAll, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const FIXTURE = "pi-before-compaction.jsonl";
// Larger than the session (277k tokens): a regular compaction keeps keepRecentTokens, here only the
// newest turn; one of a session larger than the window keeps up to the run's target, which holds
// usage figures to learn from.
const WINDOW = 300_000;
const dir = mkdtempSync(join(tmpdir(), "compaction-recorded-calibration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A user message of about 1,500 o200k tokens, newer than everything in the fixture. */
const question = (n: number): PiMessage => ({
  role: "user",
  content: [{ type: "text", text: `Question ${n}: why does the build cache miss on CI? ${"Explain each step of the cache key and what changes it. ".repeat(130)}` }],
  timestamp: Date.UTC(2027, 0, 1, 0, n),
});

describe(`the calibration a compaction records (${FIXTURE})`, () => {
  const messages = loadPiMessages(FIXTURE, { context: true }) as PiMessage[];
  let compactor: Compactor<PiMessage>;

  it("is recorded in the event, and counts what follows the compaction in the provider's measure", async () => {
    compactor = await createCompactor<PiMessage>({ cwd: tmpProject({}), adapter: "pi", preset: "safeguard" });
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    expect(result.status).toBe("compacted");
    const learned = compactor.tokens.calibration(messages);
    expect(learned.source).toBe("usage");
    expect(result.event?.calibration).toEqual({ ratio: learned.ratio, perMessage: learned.perMessage, samples: learned.samples, model: learned.model });
    // The compacted context alone gives nothing to learn from.
    expect(compactor.tokens.calibration(result.messages).source).toBe("none");

    const event = result.event!;
    const anchor = { tokens: event.tokensAfterCompaction, lastIndex: result.messages.length - 1, calibration: event.calibration! };
    const next = [...result.messages, question(1)];
    const size = compactor.tokens.contextTokens(next, anchor);
    expect(size.calibration).toMatchObject({ source: "compaction", ratio: learned.ratio });
    const counted = compactor.tokens.count(question(1));
    expect(size.tokens).toBe(event.tokensAfterCompaction + providerMeasure(size.calibration, counted, 1));
    expect(size.tokens - event.tokensAfterCompaction).toBeGreaterThan(counted * 1.2);
    // Without the recorded calibration the new message would be counted raw.
    expect(compactor.tokens.contextTokens(next, { tokens: anchor.tokens, lastIndex: anchor.lastIndex }).tokens).toBe(event.tokensAfterCompaction + counted);
    // The budget of the next run is sized with it too.
    expect(compactor.tokens.budgetRatio(next, anchor.calibration)).toBeCloseTo(learned.ratio, 6);
    expect(compactor.tokens.budgetRatio(next)).toBe(1);
    // And the request send-time shaping builds (shapeRequest's recordedCalibration).
    const shaped = compactor.shapeRequest(next, { contextWindow: WINDOW, recordedCalibration: anchor.calibration });
    expect(shaped.budget).toBe(Math.floor(compactor.shapeRequest(next, { contextWindow: WINDOW }).budget / learned.ratio));
    compactor.dispose();
  });

  it("carries on in the context manager after its own compaction (in memory)", async () => {
    const manager = await createContextManager<PiMessage>({ cwd: tmpProject({}), adapter: "pi", messages, contextWindow: WINDOW });
    const result = await manager.compact();
    expect(result.status).toBe("compacted");
    const after = manager.tokens;
    expect(after).toBe(result.event!.tokensAfterCompaction);
    await manager.append(question(1));
    const counted = manager.compactor.tokens.count(question(1));
    expect(manager.tokens - after).toBe(providerMeasure({ ...result.event!.calibration!, source: "compaction" }, counted, 1));
    expect(manager.tokens - after).toBeGreaterThan(counted * 1.2);
    await manager.dispose();
  });

  it("is read back from the session file with the compaction's anchor", async () => {
    const path = join(dir, "session.jsonl");
    await createSession(path, { cwd: dir }, messages.map((message) => ({ type: "message" as const, message })));
    const compactor = await createCompactor<PiMessage>({ cwd: tmpProject({}), adapter: "pi", preset: "safeguard" });
    const loaded = loadBoundary(path);
    const result = await compactor.compact({ messages: loaded.messages as PiMessage[], contextWindow: WINDOW, suffixOnly: true });
    expect(result.status).toBe("compacted");
    await appendCompaction(path, result, { firstKeptEntryId: loaded.entryIds[result.cut!.firstKeptIndex]! });
    await appendEntries(path, [{ type: "message", message: question(2) }]);
    const reloaded = loadBoundary(path);
    const anchor = compactionAnchor(reloaded);
    expect(anchor?.calibration).toEqual(result.event!.calibration);
    const size = compactor.tokens.contextTokens(reloaded.messages as PiMessage[], anchor);
    expect(size.calibration.source).toBe("compaction");
    expect(size.tokens).toBe(result.event!.tokensAfterCompaction + providerMeasure(size.calibration, compactor.tokens.count(question(2)), 1));
    compactor.dispose();
  });
});
