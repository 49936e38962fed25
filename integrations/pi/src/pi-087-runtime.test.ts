/**
 * The extension in today's pi (`@earendil-works/pi-coding-agent` 0.87.1, Node >= 22.19): an
 * AgentSession created with pi's SDK over a copy of a real session, the extension loaded, a
 * `.compactionrc` in the session's working directory, and pi-ai's faux model, which counts every
 * model call. The same behaviours as ./pi-runtime.test.ts (pi 0.73.1), plus what is new in this
 * pi: the event's `reason` and `willRetry`, and a model catalog with larger windows.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { CompactionEvent } from "@compaction/core";
import { isPrunedMarker } from "@compaction/plugin-layered";
import type { CompactionEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { createRuntimeSession087, PI_087_UNSUPPORTED, PI_087_VERSION, type Runtime087Options, type RuntimeSession087 } from "./test-support/pi-087-session.js";
import { collectReports, copyFixture, type SessionDir } from "./test-support/pi-session.js";

const ESTIMATE = { tokenizer: { counter: "estimate" } };

let session: SessionDir | undefined;
let runtime: RuntimeSession087 | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

async function start(config: Record<string, unknown>, options: Omit<Runtime087Options, "extensions"> = {}) {
  session = copyFixture();
  session.config({ ...ESTIMATE, ...config });
  const reports = collectReports();
  runtime = await createRuntimeSession087(session, { ...options, extensions: [compactionExtension({ report: reports.report })] });
  const before = runtime.sessions.buildSessionContext().messages;
  return { session, runtime, reports, before };
}

/** The last line of the session file, parsed. */
function lastLineOf(file: string): SessionEntry {
  const lines = readFileSync(file, "utf8").trimEnd().split("\n");
  return JSON.parse(lines[lines.length - 1] as string) as SessionEntry;
}

/** The messages of a context other than system messages (pi 0.87 replays a system checkpoint after a compaction). */
function conversation<M extends { role: string }>(messages: readonly M[]): M[] {
  return messages.filter((m) => m.role !== "system");
}

const title = `in pi ${PI_087_VERSION}'s runtime${PI_087_UNSUPPORTED === undefined ? "" : ` (skipped: ${PI_087_UNSUPPORTED})`}`;

describe.skipIf(PI_087_UNSUPPORTED !== undefined)(title, () => {
  describe("session.compact() with the safeguard preset", () => {
    it("writes our compaction entry, with the CompactionEvent as details and pi's reason as the trigger", async () => {
      const { runtime, session } = await start({ preset: "safeguard" }, { model: { contextWindow: 200_000 } });
      const result = await runtime.session.compact();
      const entry = lastLineOf(session.file) as CompactionEntry<CompactionEvent>;
      expect(entry).toMatchObject({ type: "compaction", fromHook: true, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId });
      expect(entry.details).toMatchObject({ type: "compaction", strategy: "safeguard", trigger: "manual", customInstruction: null, warnings: [] });
      expect(runtime.faux.state.callCount).toBe(0);
    });

    // pi's reason says "manual" although the context (177,657 tokens) is past pi's threshold of a
    // 120,000-token window, where the old guess said "auto".
    it("records /compact as manual past pi's threshold, where the trigger used to be guessed as auto", async () => {
      const { runtime } = await start({ preset: "safeguard" }, { model: { contextWindow: 120_000 } });
      const result = await runtime.session.compact();
      expect((result.details as CompactionEvent).trigger).toBe("manual");
    });

    it("leaves pi a context of the summary and the newest messages, verbatim", async () => {
      const { runtime, before } = await start({ preset: "safeguard" }, { model: { contextWindow: 200_000 } });
      const result = await runtime.session.compact("the theme selector port");
      const details = result.details as CompactionEvent;
      expect(details.customInstruction).toBe("the theme selector port");
      const after = conversation(runtime.sessions.buildSessionContext().messages);
      expect(after[0]).toMatchObject({ role: "compactionSummary", summary: result.summary });
      expect(after.slice(1)).toEqual(conversation(before.slice(details.messagesCompacted)));
    });
  });

  describe("session.compact() with the rolling preset", () => {
    it("evicts the oldest messages behind a note naming memory_search, which the extension gave the agent", async () => {
      const { runtime, reports } = await start({ preset: "rolling" }, { model: { contextWindow: 120_000 } });
      const result = await runtime.session.compact();
      const details = result.details as CompactionEvent;
      expect([details.strategy, details.layer]).toEqual(["rolling", "evict"]);
      expect(result.summary).toMatch(/^\[Context rolled: \d+ messages evicted \(\d+ tokens\)\. Full transcript available via memory_search\./);
      expect(runtime.session.getActiveToolNames()).toContain("memory_search");
      expect(details.tokensAfterCompaction).toBeLessThanOrEqual(0.8 * 120_000);
      expect(reports.of("warning")).toEqual([]);
      expect(runtime.faux.state.callCount).toBe(0);
    });

    // Why rolling "cancelled" on the real session in pi 0.87.1: the session's model,
    // claude-sonnet-4-5, has a 1,000,000-token window in this pi's catalog (200,000 in 0.73.1),
    // so 177,657 tokens are already within rolling's target of 80% and there is nothing to evict.
    it("on the session's own model (claude-sonnet-4-5, a 1,000,000-token window here) cancels and says which window left nothing to evict", async () => {
      const { runtime, session, reports } = await start({ preset: "rolling" }, { model: "session" });
      expect([runtime.session.model?.id, runtime.session.model?.contextWindow]).toEqual(["claude-sonnet-4-5", 1_000_000]);
      const bytes = readFileSync(session.file);
      await expect(runtime.session.compact()).rejects.toThrow("Compaction cancelled");
      expect(readFileSync(session.file).equals(bytes)).toBe(true);
      expect(reports.of("warning")).toEqual([
        expect.stringMatching(
          /rolling: the context holds about \d+ tokens, already within its target of 500000 \(50% of the 1000000-token window\).*The window was 1000000 tokens \(pi's model anthropic\/claude-sonnet-4-5\)/,
        ),
      ]);
    });

    // pi's overflow recovery: the provider refuses the request as too long although the model's
    // window says it fits. The extension compacts to the refused size, and pi retries the turn.
    it("evicts on pi's overflow recovery even when the model's window says the context fits, and pi retries the turn", async () => {
      const ai = await import("@earendil-works/pi-ai");
      const overflow = ai.fauxAssistantMessage("", { stopReason: "error", errorMessage: "prompt is too long: 180000 tokens > 150000 maximum" });
      const { runtime, session } = await start(
        { preset: "rolling" },
        { model: { contextWindow: 1_000_000 }, settings: { compaction: { enabled: true } }, responses: [overflow, ai.fauxAssistantMessage("ok")] },
      );
      const reasons: Array<[string, boolean]> = [];
      runtime.session.subscribe((event) => {
        if (event.type === "compaction_end" || event.type === "compaction_start") reasons.push([`${event.type}:${event.reason}`, "willRetry" in event ? Boolean(event.willRetry) : false]);
      });
      await runtime.session.prompt("Where did we leave the theme work?");
      await runtime.session.waitForIdle();
      const compaction = readFileSync(session.file, "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line) as SessionEntry)
        .find((entry): entry is CompactionEntry<CompactionEvent> => entry.type === "compaction");
      expect(compaction?.details).toMatchObject({ strategy: "rolling", layer: "evict", trigger: "auto" });
      expect(compaction?.details?.tokensAfterCompaction).toBeLessThan(compaction?.tokensBefore ?? 0);
      expect(runtime.faux.state.callCount).toBe(2);
      expect(reasons.map(([r]) => r)).toContain("compaction_end:overflow");
    });
  });

  describe("session.compact() when the preset has nothing to compact", () => {
    it("cancels, writes nothing, and makes no model call", async () => {
      const { runtime, session, reports } = await start({ preset: "rolling" }, { model: { contextWindow: 1_000_000 } });
      const bytes = readFileSync(session.file);
      await expect(runtime.session.compact()).rejects.toThrow("Compaction cancelled");
      expect(readFileSync(session.file).equals(bytes)).toBe(true);
      expect(runtime.faux.state.callCount).toBe(0);
      expect(reports.of("warning")[0]).toMatch(/Nothing was compacted \(noop\)/);
    });
  });

  describe("a .compactionrc naming a plugin that is not installed", () => {
    it("cancels the compaction and says what to install next to the extension", async () => {
      const { runtime, session, reports } = await start({ preset: "safeguard", plugins: ["summarizer-gemini"] }, { model: { contextWindow: 200_000 } });
      const bytes = readFileSync(session.file);
      await expect(runtime.session.compact()).rejects.toThrow("Compaction cancelled");
      expect(readFileSync(session.file).equals(bytes)).toBe(true);
      expect(reports.of("warning").at(-1)).toMatch(
        /Cannot find plugin 'summarizer-gemini'.*\[COMPACTION_PLUGIN_NOT_FOUND\] Plugins and presets named in \.compactionrc must be installed next to @compaction\/pi, which pi loads from its own folder; install @compaction\/plugin-summarizer-gemini/s,
      );
    });
  });

  describe("loading", () => {
    const extensionFile = fileURLToPath(new URL("./index.ts", import.meta.url));

    it("prunes old tool outputs in what is sent when pi loads the extension from its file, and leaves the session file as it was", async () => {
      session = copyFixture();
      session.config(ESTIMATE);
      runtime = await createRuntimeSession087(session, { model: { contextWindow: 150_000 }, extensionPaths: [extensionFile] });
      const bytes = readFileSync(session.file);
      await runtime.session.prompt("What did we change in the theme loader?");
      expect(runtime.faux.state.callCount).toBe(1);
      const outputs = (runtime.requests[0]?.messages ?? []).filter((m) => m.role === "toolResult");
      const markers = outputs.filter((m) => m.content.some((block) => block.type === "text" && isPrunedMarker(block.text)));
      expect(markers.length).toBeGreaterThan(0);
      expect(markers.length).toBeLessThan(outputs.length);
      const now = readFileSync(session.file);
      expect(now.subarray(0, bytes.length).equals(bytes)).toBe(true);
      expect(now.toString("utf8")).not.toContain("[pruned tool output:");
    });

    it("refuses to load a second time into the same pi session, saying where the first copy came from", async () => {
      session = copyFixture();
      session.config(ESTIMATE);
      await expect(
        createRuntimeSession087(session, { model: { contextWindow: 150_000 }, extensions: [compactionExtension()], extensionPaths: [extensionFile] }),
      ).rejects.toThrow(/@compaction\/pi is already loaded in this pi session \(from [^)]*integrations\/pi\/\); this copy was not loaded, so compaction runs once/);
    });
  });
});
