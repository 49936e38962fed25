/**
 * Issue 10 in pi's real runtime (pi-coding-agent as installed): a session whose newest turn
 * holds a ~300,000-token tool result. `session.compact()` succeeds, the session file keeps the
 * full output, and what the `context` event sends fits the window and holds the request.
 */
import { readFileSync } from "node:fs";
import { createPiAdapter, type PiMessage, SHRINK_MARKER_PATTERN } from "@compaction/core";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { PRESETS_FOR_RUNTIME } from "./test-support/presets.js";
import { collectReports, copyFixture, createRuntimeSession, openSession, type RuntimeSession, type SessionDir } from "./test-support/pi-session.js";

const WINDOW = 32_000;
const REQUEST = "Run the whole test suite and tell me which tests fail.";

let session: SessionDir | undefined;
let runtime: RuntimeSession | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

/** A copy of the real session with a newest turn whose tool call returned about 300,000 tokens (chars/4). */
function sessionWithHugeTurn(preset: string): SessionDir {
  const dir = copyFixture();
  dir.config({ preset, tokenizer: { counter: "estimate" } });
  const sessions = openSession(dir);
  const now = Date.now();
  sessions.appendMessage({ role: "user", content: [{ type: "text", text: REQUEST }], timestamp: now });
  sessions.appendMessage({
    role: "assistant",
    content: [{ type: "toolCall", id: "huge_call", name: "bash", arguments: { command: "npm test" } }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "toolUse",
    timestamp: now + 1,
  });
  const log = Array.from({ length: 24_000 }, (_, i) => `test ${String(i).padStart(6, "0")} ok ${"x".repeat(30)}`).join("\n");
  sessions.appendMessage({ role: "toolResult", toolCallId: "huge_call", toolName: "bash", content: [{ type: "text", text: log }], isError: false, timestamp: now + 2 });
  return dir;
}

describe.each(PRESETS_FOR_RUNTIME)("a newest turn holding a ~300,000-token tool result (preset %s)", (preset) => {
  it("session.compact() succeeds, the file keeps the output, and the context event sends a request that fits and holds it", async () => {
    session = sessionWithHugeTurn(preset);
    const reports = collectReports();
    runtime = await createRuntimeSession(session, { contextWindow: WINDOW, extensions: [compactionExtension({ report: reports.report })] });
    await runtime.session.compact();
    expect(readFileSync(session.file, "utf8")).toContain("test 023999 ok"); // nothing lost

    await runtime.session.prompt("Which of them failed?");
    expect(runtime.faux.state.callCount).toBe(1);
    const sent = (runtime.requests[0]?.messages ?? []) as unknown as PiMessage[];
    const adapter = createPiAdapter();
    const texts = sent.map((m) => adapter.readFacts(m).text);
    const tokens = texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
    expect(tokens).toBeLessThanOrEqual(WINDOW);
    expect(texts).toContain(REQUEST);
    expect(texts).toContain("Which of them failed?");
    const output = texts.find((t) => t.startsWith("test 000000 ok"));
    expect(output).toMatch(SHRINK_MARKER_PATTERN);
    expect(output).toContain("tool call huge_call");
    expect(output).toContain("test 023999 ok");
  });
});
