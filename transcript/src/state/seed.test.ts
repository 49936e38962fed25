/** renderSessionSeed and sessionSeedEntries: the first message of a session started from a state. */
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createEstimateCounter, createPiAdapter, type SessionState } from "@compaction/core";
import { extractSessionState } from "@compaction/plugin-summarizer-extractive";
import { tmpSessionDir } from "../test-support/pi-sessions.js";
import { buildContext } from "../context.js";
import { readSession } from "../parse.js";
import { createSession } from "../session-file.js";
import { renderSessionSeed, SESSION_SEED_TITLE, sessionSeedEntries } from "./seed.js";

const REAL = fileURLToPath(new URL("../../../../shared/fixtures/real/", import.meta.url));

function makeState(overrides: Partial<SessionState> = {}): SessionState {
  return {
    format: "compaction-session-state",
    version: 1,
    exportedAt: "2026-04-05T06:07:08.000Z",
    source: { session: "0199aaaa-bbbb", path: "/s.jsonl", format: "pi", cwd: "/home/me/app", leafEntryId: "e9", messages: 12, tokens: 3400 },
    goal: ["Add retries to the fetch client"],
    constraints: ["Never retry POST requests."],
    decisions: ["Use exponential backoff instead of a fixed delay."],
    openTasks: ["Respond to: and the timeout?"],
    done: ["edited src/fetch.ts"],
    files: { read: ["src/http.ts"], modified: ["src/fetch.ts"] },
    toolOperations: {
      tools: [
        { name: "bash", calls: 3, failed: 1 },
        { name: "edit", calls: 1, failed: 0 },
      ],
      commands: ["npm test"],
      failed: ["bash(npm test): Error: 1 failing"],
    },
    identifiers: ["MAX_RETRIES"],
    summary: "## Goal\n- Add retries to the fetch client\n## Files\n### Modified\n- `src/fetch.ts`",
    lastExchange: { user: "and the timeout?\nkeep it short", assistant: null, timestamp: "2026-04-05T05:00:00.000Z" },
    ...overrides,
  };
}

const headings = (text: string) => text.split("\n").filter((line) => /^#{1,3} /.test(line));

describe("renderSessionSeed", () => {
  it("opens with the title and a line naming the earlier session, its cwd and when it was last active", () => {
    const [title, blank, intro] = renderSessionSeed(makeState()).split("\n");
    expect([title, blank]).toEqual([SESSION_SEED_TITLE, ""]);
    expect(intro).toMatch(/^This conversation continues an earlier one \(pi session `0199aaaa-bbbb`, in `\/home\/me\/app`, last active 2026-04-05 05:00 UTC\)\. /);
  });

  it("falls back to the export date and a plain 'conversation' when the source has no id, cwd or times", () => {
    const state = makeState({
      source: { session: null, path: null, format: "messages", cwd: null, leafEntryId: null, messages: 1, tokens: 1 },
      lastExchange: { user: "hi", assistant: null, timestamp: null },
    });
    expect(renderSessionSeed(state)).toContain("continues an earlier one (conversation, exported 2026-04-05 06:07 UTC).");
  });

  it("writes the sections in order and leaves out empty ones", () => {
    expect(headings(renderSessionSeed(makeState({ decisions: [] })))).toEqual([
      SESSION_SEED_TITLE,
      "## Goal",
      "## Constraints & Preferences",
      "## Done",
      "## Open Tasks",
      "## Files",
      "### Read",
      "### Modified",
      "## Tool Operations",
      "### Commands",
      "### Failed",
      "## Identifiers",
      "## Last Exchange",
    ]);
  });

  it("writes the current task after the goal, then the plan verbatim, its tree lines unchanged", () => {
    const tree = "```\nsrc/\n├── core/   # MOVE\n└── utils/  # MOVE\n```";
    const seed = renderSessionSeed(makeState({ currentTask: ["move the helpers into utils/"], plan: [tree] }));
    expect(headings(seed).slice(0, 4)).toEqual([SESSION_SEED_TITLE, "## Goal", "## Current Task", "## Plan"]);
    expect(seed).toContain(`## Current Task\n- move the helpers into utils/\n\n## Plan\n${tree}\n\n## Constraints`);
  });

  it("lists each tool's calls and failures, and paths and commands in backticks", () => {
    const seed = renderSessionSeed(makeState());
    expect(seed).toContain("## Tool Operations\n- `bash`: 3 calls, 1 failed\n- `edit`: 1 call\n### Commands\n- `npm test`");
    expect(seed).toContain("### Modified\n- `src/fetch.ts`");
  });

  it("does not repeat the summary's sections the lists already cover", () => {
    const seed = renderSessionSeed(makeState());
    expect(seed.match(/^## Goal$/gm)).toHaveLength(1);
    expect(seed.match(/src\/fetch\.ts/g)).toHaveLength(2); // Done and Files/Modified, not the summary's copy
  });

  it("keeps the summary's sections the lists do not cover, and text before its first heading", () => {
    const summary = "Checkpoint of the retry work.\n\n## Goal\n- x\n## Critical Context\n- the API rate-limits at 10 rps\n## Progress\n### Blocked\n- waiting on the proxy team";
    const seed = renderSessionSeed(makeState({ summary }));
    expect(seed).toContain("## Earlier Summary\nCheckpoint of the retry work.");
    expect(seed).toContain("## Critical Context\n- the API rate-limits at 10 rps");
    expect(seed).toContain("## Blocked\n- waiting on the proxy team");
    expect(seed.indexOf("## Critical Context")).toBeLessThan(seed.indexOf("## Last Exchange"));
  });

  it("keeps the newest items of a long list, the oldest goals, and says how many are not shown", () => {
    const done = Array.from({ length: 25 }, (_, i) => `step ${i + 1}`);
    const goal = Array.from({ length: 4 }, (_, i) => `goal ${i + 1}`);
    const seed = renderSessionSeed(makeState({ done, goal }), { maxItemsPerSection: 3 });
    expect(seed).toContain("## Done\n- (22 earlier items not shown)\n- step 23\n- step 24\n- step 25\n\n");
    expect(seed).toContain("## Goal\n- goal 1\n- goal 2\n- goal 3\n- (1 later item not shown)\n\n");
  });

  it("quotes the last exchange line by line", () => {
    const seed = renderSessionSeed(makeState({ lastExchange: { user: "why?\n\nplease", assistant: "Because.", timestamp: null } }));
    expect(seed.endsWith("## Last Exchange\nUser:\n> why?\n>\n> please\n\nAssistant:\n> Because.")).toBe(true);
  });

  it("cuts a long quote and says how much was left out", () => {
    const seed = renderSessionSeed(makeState({ lastExchange: { user: "x".repeat(50), assistant: null, timestamp: null } }), { maxQuoteChars: 20 });
    expect(seed.endsWith(`User:\n> ${"x".repeat(20)}\n>\n> [… 30 more characters not shown]`)).toBe(true);
  });

  it("has no Last Exchange section when there was none", () => {
    expect(renderSessionSeed(makeState({ lastExchange: { user: null, assistant: null, timestamp: null } }))).not.toContain("## Last Exchange");
  });
});

describe("sessionSeedEntries", () => {
  const dir = tmpSessionDir();
  afterAll(() => dir.cleanup());
  const now = new Date("2026-05-06T07:08:09.010Z");

  it("is one pi user message entry holding the seed text, timed at `now`", () => {
    const state = makeState();
    expect(sessionSeedEntries(state, now)).toEqual([
      {
        type: "message",
        message: { role: "user", content: [{ type: "text", text: renderSessionSeed(state) }], timestamp: now.getTime() },
        timestamp: now.toISOString(),
      },
    ]);
  });

  it("starts a session file whose context is that one user message", async () => {
    const state = makeState();
    const path = `${dir.dir}/seeded.jsonl`;
    await createSession(path, { cwd: "/home/me/app" }, sessionSeedEntries(state, now));
    const context = buildContext(readSession(path).entries);
    expect(context.messages).toHaveLength(1);
    const facts = createPiAdapter().readFacts(context.messages[0] as never);
    expect(facts.kind).toBe("user");
    expect(facts.text).toBe(renderSessionSeed(state));
  });
});

describe("renderSessionSeed on the state of pi-before-compaction.jsonl", () => {
  const session = readSession(`${REAL}pi-before-compaction.jsonl`);
  const context = buildContext(session.entries);
  const state = extractSessionState(context.messages, createPiAdapter(), {
    source: { session: session.header.id, path: null, format: "pi", cwd: session.header.cwd ?? null, leafEntryId: context.leafId },
    counter: createEstimateCounter(),
  });
  const seed = renderSessionSeed(state);

  it("carries the earlier compaction's own sections the lists do not cover", () => {
    expect(seed).toContain("## User Preferences\n- **E2E tests only** - no unit tests");
  });

  it("shows at most 20 items of each long list", () => {
    expect(state.done.length).toBeGreaterThan(20);
    const doneSection = seed.slice(seed.indexOf("## Done\n"), seed.indexOf("\n\n", seed.indexOf("## Done\n")));
    expect(doneSection.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(21);
    expect(doneSection).toContain(`- (${state.done.length - 20} earlier items not shown)`);
  });

  it("quotes the start of the last user message", () => {
    const firstLine = (state.lastExchange.user ?? "").split("\n")[0];
    expect(seed).toContain(`## Last Exchange\nUser:\n> ${firstLine}\n`);
  });
});
