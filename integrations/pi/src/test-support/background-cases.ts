/**
 * The background-compaction cases of ./background-scenario.ts, one function per case, run by the
 * tests for pi 0.73.1 (background.runtime.test.ts) and 0.87.1 (background-087.runtime.test.ts).
 * A compaction asks the summary model once or more (the history, and the start of a turn it
 * splits), so the cases count the requests made during the compaction pi asked for.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { BackgroundScenario, expectPreparedInPlace, FIRST_PROMPT, prepareDuringSecondPrompt, SECOND_PROMPT, type StartRuntime, summariesIn, until } from "./background-scenario.js";

const READY = "compaction: the compaction prepared in the background is ready";

/** session.compact() gets the compaction prepared at the end of the first turn, at once. */
export async function compactReturnsPrepared(start: StartRuntime): Promise<void> {
  const scenario = new BackgroundScenario(start);
  try {
    const { window } = await scenario.windowAfterPrompt();
    const server = await scenario.server();
    const session = await scenario.sessionCopy();
    const { runtime, reports } = await scenario.runtime(session, window);
    await prepareDuringSecondPrompt(runtime, reports, server);
    const asked = server.requests.length;
    const result = await runtime.session.compact();
    // No summary asked for by the compaction itself, and no call of the agent's model: the prepared one's.
    expect(server.requests.length).toBe(asked);
    expect(server.pending).toBe(0);
    expect(runtime.faux.state.callCount).toBe(2);
    expect(summariesIn(result.summary).length).toBeGreaterThan(0);
    expect(Math.max(...summariesIn(result.summary))).toBeLessThanOrEqual(asked);
    expectPreparedInPlace(runtime, result.summary);
    expect(reports.of("info").some((message) => /compacted \d+ messages, .* \(prepared in the background [\d.]+ s ago; \d+ messages appended since stay after it\)\.$/.test(message))).toBe(true);
    // pi wrote our entry.
    const last = readFileSync(session.file, "utf8").trimEnd().split("\n").at(-1) as string;
    expect(JSON.parse(last)).toMatchObject({ type: "compaction", fromHook: true, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId });
  } finally {
    await scenario.end();
  }
}

/**
 * pi's own, automatic compaction (its overflow recovery: the model refuses the second request as
 * too long) gets the prepared one at once, and pi retries the turn with it in place.
 */
export async function autoCompactionReturnsPrepared(start: StartRuntime): Promise<void> {
  const scenario = new BackgroundScenario(start);
  try {
    const { window } = await scenario.windowAfterPrompt();
    const server = await scenario.server();
    const session = await scenario.sessionCopy();
    const { runtime, reports } = await scenario.runtime(session, window, { overflowSecond: true });
    const asked = server.requests.length;
    await runtime.session.prompt(FIRST_PROMPT);
    await until(() => server.requests.length > asked, "the end of the first turn asked the summary model for the prepared compaction");
    server.release();
    await until(() => reports.of("info").some((message) => message.startsWith(READY)), "the prepared compaction is ready");
    server.hold();
    const prepared = server.requests.length;
    expect(readFileSync(session.file, "utf8")).not.toContain('"type":"compaction"');
    // The model refuses the second request as too long: pi compacts on its own, then retries the turn.
    await runtime.session.prompt(SECOND_PROMPT);
    await until(() => runtime.faux.state.callCount === 3, "pi retried the turn after its compaction");
    expect(server.requests.length).toBe(prepared);
    const entry = readFileSync(session.file, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line) as { type: string; summary?: string }).findLast((e) => e.type === "compaction");
    expect(summariesIn(entry?.summary ?? "").length).toBeGreaterThan(0);
    expect(Math.max(...summariesIn(entry?.summary ?? ""))).toBeLessThanOrEqual(prepared);
    expect(reports.of("info").some((message) => message.includes("(prepared in the background"))).toBe(true);
    expectPreparedInPlace(runtime, entry?.summary ?? "");
  } finally {
    await scenario.end();
  }
}

/** /compact with a focus asks for another summary: the prepared one is dropped (reported) and the model is asked again. */
export async function focusDropsPrepared(start: StartRuntime): Promise<void> {
  const scenario = new BackgroundScenario(start);
  try {
    const { window } = await scenario.windowAfterPrompt();
    const server = await scenario.server();
    const session = await scenario.sessionCopy();
    const { runtime, reports } = await scenario.runtime(session, window);
    await prepareDuringSecondPrompt(runtime, reports, server);
    const asked = server.requests.length;
    server.release();
    const result = await runtime.session.compact("the theme selector port");
    expect(server.requests.length).toBeGreaterThan(asked);
    expect(Math.max(...summariesIn(result.summary))).toBeGreaterThan(asked);
    expect(reports.of("info")).toContainEqual(expect.stringMatching(/^compaction: the compaction prepared in the background was dropped: the compaction asked for was given instructions for its summary .* \(it compacted \d+ messages of a \d+-token context in [\d.]+ s\)\.$/));
  } finally {
    await scenario.end();
  }
}

/** A compaction prepared on the branch pi has since left (the leaf moved back) no longer applies: dropped, and pi's compaction asks the model. */
export async function otherBranchDropsPrepared(start: StartRuntime): Promise<void> {
  const scenario = new BackgroundScenario(start);
  try {
    const { window } = await scenario.windowAfterPrompt();
    const server = await scenario.server();
    const session = await scenario.sessionCopy();
    const { runtime, reports } = await scenario.runtime(session, window);
    const before = runtime.sessions.getBranch() as Array<{ id: string }>;
    await prepareDuringSecondPrompt(runtime, reports, server);
    // Back to the branch as it was before the first prompt: the prepared snapshot holds entries it has not.
    runtime.sessions.branch((before.at(-1) as { id: string }).id);
    const asked = server.requests.length;
    server.release();
    const result = await runtime.session.compact();
    expect(server.requests.length).toBeGreaterThan(asked);
    expect(Math.max(...summariesIn(result.summary))).toBeGreaterThan(asked);
    expect(reports.of("info")).toContainEqual(expect.stringMatching(/^compaction: the compaction prepared in the background was dropped: it no longer applies: /));
  } finally {
    await scenario.end();
  }
}

/** background: false prepares nothing: session.compact() asks the model itself. */
export async function offCompactsWhenAsked(start: StartRuntime): Promise<void> {
  const scenario = new BackgroundScenario(start);
  try {
    const { window } = await scenario.windowAfterPrompt();
    const server = await scenario.server();
    const session = await scenario.sessionCopy();
    const { runtime, reports } = await scenario.runtime(session, window, { background: false });
    const asked = server.requests.length;
    await runtime.session.prompt(FIRST_PROMPT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.requests.length).toBe(asked);
    server.release();
    const result = await runtime.session.compact();
    expect(server.requests.length).toBeGreaterThan(asked);
    expect(summariesIn(result.summary).length).toBeGreaterThan(0);
    expect(reports.all.filter((report) => report.message.includes("in the background"))).toEqual([]);
  } finally {
    await scenario.end();
  }
}
