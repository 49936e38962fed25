/**
 * Issue 10 in pi's real runtime (pi-coding-agent as installed): a session whose newest turn
 * holds a ~300,000-token tool result. `session.compact()` succeeds, the session file keeps the
 * full output, and what the `context` event sends fits the window and holds the request.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { expectRequestFits, FOLLOW_UP, hugeTurn, WINDOW } from "./test-support/huge-turn.js";
import { PRESETS_FOR_RUNTIME } from "./test-support/presets.js";
import { collectReports, copyFixture, createRuntimeSession, openSession, type RuntimeSession, type SessionDir } from "./test-support/pi-session.js";

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
  for (const message of hugeTurn(Date.now())) sessions.appendMessage(message as Parameters<typeof sessions.appendMessage>[0]);
  return dir;
}

describe.each(PRESETS_FOR_RUNTIME)("a newest turn holding a ~300,000-token tool result (preset %s)", (preset) => {
  it("session.compact() succeeds, the file keeps the output, and the context event sends a request that fits and holds it", async () => {
    session = sessionWithHugeTurn(preset);
    const reports = collectReports();
    runtime = await createRuntimeSession(session, { contextWindow: WINDOW, extensions: [compactionExtension({ report: reports.report })] });
    await runtime.session.compact();
    expect(readFileSync(session.file, "utf8")).toContain("test 023999 ok"); // nothing lost

    await runtime.session.prompt(FOLLOW_UP);
    expect(runtime.faux.state.callCount).toBe(1);
    expectRequestFits(runtime.requests[0]?.messages);
  });
});
