import { isPrunedMarker } from "@compaction/plugin-layered";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import type { PiCompactionOptions } from "./options.js";
import { collectReports, copyFixture, createRuntimeSession, type RuntimeSession, type SessionDir } from "./test-support/pi-session.js";

let session: SessionDir | undefined;
let runtime: RuntimeSession | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

async function start(config: Record<string, unknown>, options: PiCompactionOptions = {}, contextWindow = 150_000) {
  session = copyFixture();
  session.config({ tokenizer: { counter: "estimate" }, ...config });
  const reports = collectReports();
  runtime = await createRuntimeSession(session, { contextWindow, extensions: [compactionExtension({ report: reports.report, ...options })] });
  return { runtime, reports };
}

function markersSent(r: RuntimeSession): number {
  const sent = r.requests.at(-1)?.messages ?? [];
  return sent.filter((m) => m.role === "toolResult" && m.content.some((b) => b.type === "text" && isPrunedMarker(b.text))).length;
}

describe("compactionExtension in an AgentSession", () => {
  it("gives the agent memory_search on session_start, before any compaction, when the preset has recall", async () => {
    const { runtime } = await start({ preset: "rolling" });
    expect(runtime.session.getActiveToolNames()).not.toContain("memory_search");
    await runtime.session.bindExtensions({});
    expect(runtime.session.getActiveToolNames()).toContain("memory_search");
  });

  it("gives the agent memory_search by the first model call when the host never emits session_start", async () => {
    const { runtime } = await start({ preset: "rolling" });
    await runtime.session.prompt("Where did we leave the theme work?");
    expect(runtime.requests[0]?.tools?.map((t) => t.name)).toContain("memory_search");
  });

  it("sends the messages unchanged with pruneContext off", async () => {
    const { runtime } = await start({}, { pruneContext: false });
    await runtime.session.prompt("What did we change in the theme loader?");
    expect(runtime.faux.state.callCount).toBe(1);
    expect(markersSent(runtime)).toBe(0);
  });

  it("prunes with pruneContext on (the default) in the same session", async () => {
    const { runtime } = await start({});
    await runtime.session.prompt("What did we change in the theme loader?");
    expect(markersSent(runtime)).toBeGreaterThan(0);
  });

  it("sends the newest turns that fit a window the session outgrew, and warns with COMPACTION_CONTEXT_TRIMMED when older messages are left out, once per loss", async () => {
    const { runtime, reports } = await start({}, {}, 16_000);
    await runtime.session.prompt("What did we change in the theme loader?");
    const sent = runtime.requests[0]?.messages ?? [];
    const held = runtime.sessions.buildSessionContext().messages;
    expect(sent.length).toBeLessThan(held.length);
    expect(sent.at(-1)).toMatchObject({ role: "user" });
    const trimmed = () => reports.of("warning").filter((message) => message.includes("[COMPACTION_CONTEXT_TRIMMED]"));
    expect(trimmed()).toHaveLength(1);
    expect(trimmed()[0]).toMatch(/^compaction: The request leaves out \d+ older message\(s\) of the context's \d+ to fit the budget of \d+ tokens \(window 16000 less 2000 reserved for the reply\)/);
    // The next request leaves the same messages out: nothing new to say.
    await runtime.session.prompt("And the tests for it?");
    expect(runtime.faux.state.callCount).toBe(2);
    expect(trimmed()).toHaveLength(1);
  });

  it("reports a broken config once and still sends every request", async () => {
    const { runtime, reports } = await start({ contextWindw: 100 });
    await runtime.session.prompt("first question");
    await runtime.session.prompt("second question");
    expect(runtime.faux.state.callCount).toBe(2);
    expect(reports.of("warning")).toEqual([expect.stringMatching(/unknown property 'contextWindw'.*\[COMPACTION_CONFIG_INVALID\]/s)]);
  });

  it("refuses to load twice into one pi session: pi reports the second copy as failed to load", async () => {
    session = copyFixture();
    session.config({ tokenizer: { counter: "estimate" } });
    await expect(createRuntimeSession(session, { contextWindow: 150_000, extensions: [compactionExtension(), compactionExtension()] })).rejects.toThrow(
      /@compaction\/pi is already loaded in this pi session .*COMPACTION_INPUT_INVALID|@compaction\/pi is already loaded in this pi session \(from [^)]*integrations\/pi\/\); this copy was not loaded/,
    );
  });
});
