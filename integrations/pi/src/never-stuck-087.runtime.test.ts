/**
 * Issue 10 in today's pi (`@earendil-works/pi-coding-agent` 0.87.1, Node >= 22.19), the twin of
 * ./never-stuck.runtime.test.ts (pi 0.73.1): a session whose newest turn holds a ~300,000-token
 * tool result, written with this pi's own SessionManager. `session.compact()` succeeds, the
 * session file keeps the full output, and what the `context` event sends fits the window and
 * holds the request.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { createRuntimeSession087, PI_087_UNSUPPORTED, PI_087_VERSION, type RuntimeSession087 } from "./test-support/pi-087-session.js";
import { expectRequestFits, FOLLOW_UP, hugeTurn, WINDOW } from "./test-support/huge-turn.js";
import { PRESETS_FOR_RUNTIME } from "./test-support/presets.js";
import { collectReports, copyFixture, type SessionDir } from "./test-support/pi-session.js";

let session: SessionDir | undefined;
let runtime: RuntimeSession087 | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

/** A copy of the real session with a newest turn whose tool call returned about 300,000 tokens (chars/4), appended by pi 0.87.1. */
async function sessionWithHugeTurn(preset: string): Promise<SessionDir> {
  const pi = await import("@earendil-works/pi-coding-agent");
  const dir = copyFixture();
  dir.config({ preset, tokenizer: { counter: "estimate" } });
  const sessions = pi.SessionManager.open(dir.file, undefined, dir.dir);
  for (const message of hugeTurn(Date.now())) sessions.appendMessage(message as Parameters<typeof sessions.appendMessage>[0]);
  return dir;
}

const title = `a newest turn holding a ~300,000-token tool result in pi ${PI_087_VERSION}'s runtime${PI_087_UNSUPPORTED === undefined ? "" : ` (skipped: ${PI_087_UNSUPPORTED})`}`;

describe.skipIf(PI_087_UNSUPPORTED !== undefined)(title, () => {
  it.each(PRESETS_FOR_RUNTIME)("preset %s: session.compact() succeeds, the file keeps the output, and the context event sends a request that fits and holds it", async (preset) => {
    session = await sessionWithHugeTurn(preset);
    const reports = collectReports();
    runtime = await createRuntimeSession087(session, { model: { contextWindow: WINDOW }, extensions: [compactionExtension({ report: reports.report })] });
    await runtime.session.compact();
    expect(readFileSync(session.file, "utf8")).toContain("test 023999 ok"); // nothing lost
    expect(readFileSync(session.file, "utf8")).toContain('"type":"compaction"');

    await runtime.session.prompt(FOLLOW_UP);
    expect(runtime.faux.state.callCount).toBe(1);
    expectRequestFits(runtime.requests[0]?.messages);
    // The compaction's own warnings (the cut moved, the output shrunk) are expected; shaping never failed.
    expect(reports.of("warning").filter((w) => /could not shape|shapeRequest/.test(w))).toEqual([]);
  });
});
