import { appendEntries, autoCompactEntry } from "@compaction/transcript";
import { type CompactionEvent } from "@compaction/core";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BeforeCompactDeps, beforeCompact } from "./before-compact.js";
import { CompactorCache } from "./compactor-cache.js";
import { type PiCompactionOptions, resolvePiCompactionOptions } from "./options.js";
import type { RecallStatus } from "./recall-link.js";
import { type CapturedCompaction, capturePiCompaction, collectReports, copyFixture, type Reports, type SessionDir } from "./test-support/pi-session.js";

const ESTIMATE = { tokenizer: { counter: "estimate" } };

interface Setup {
  readonly session: SessionDir;
  readonly captured: CapturedCompaction;
}

async function setUp(config: Record<string, unknown>, contextWindow: number, focus?: string): Promise<Setup> {
  const session = copyFixture();
  session.config({ ...ESTIMATE, ...config });
  const captured = await capturePiCompaction(session, contextWindow, focus);
  return { session, captured };
}

function tearDown(setup: Setup | undefined): void {
  setup?.captured.runtime.dispose();
  setup?.session.remove();
}

const caches: CompactorCache[] = [];
afterAll(async () => {
  for (const cache of caches) await cache.dispose();
});

function handle(setup: Setup, options: PiCompactionOptions = {}, recall?: (s: Setup) => RecallStatus, event = setup.captured.event) {
  const reports = collectReports();
  const cache = new CompactorCache();
  caches.push(cache);
  const deps: BeforeCompactDeps = {
    settings: resolvePiCompactionOptions({ report: reports.report, ...options }, {}),
    compactorFor: (ctx) => cache.get({ cwd: ctx.cwd, agent: undefined, preset: undefined, trusted: true }),
    recall: async () => recall?.(setup) ?? { state: "none" },
  };
  return { reports, run: () => beforeCompact(event, setup.captured.ctx, deps) };
}

describe("session_before_compact with the safeguard preset and /compact <focus>", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({ preset: "safeguard" }, 200_000, "keep the theme decisions");
  });
  afterAll(() => tearDown(setup));

  it("returns our compaction with the CompactionEvent as details", async () => {
    const result = await handle(setup).run();
    const details = result?.compaction?.details as CompactionEvent;
    expect(details).toMatchObject({ type: "compaction", strategy: "safeguard", trigger: "manual", customInstruction: "keep the theme decisions" });
    expect(details.boundaryMessageId).toBe(result?.compaction?.firstKeptEntryId);
    expect(result?.compaction?.tokensBefore).toBe(details.tokensBeforeCompaction);
  });

  it("gives pi an entry its own boundary rule turns into the summary and the newest messages", async () => {
    const before = setup.captured.runtime.sessions.buildSessionContext().messages;
    const compaction = (await handle(setup).run())?.compaction;
    if (compaction === undefined) throw new Error("no compaction returned");
    const sessions = SessionManager.open(setup.session.file, undefined, setup.session.dir);
    sessions.appendCompaction(compaction.summary, compaction.firstKeptEntryId, compaction.tokensBefore, compaction.details, true);
    const after = sessions.buildSessionContext().messages;
    const details = compaction.details as CompactionEvent;
    expect(after[0]).toMatchObject({ role: "compactionSummary", summary: compaction.summary });
    expect(after.slice(1)).toEqual(before.slice(details.messagesCompacted));
    expect(compaction.summary).toContain("## Last Exchange (Verbatim)");
  });

  it("reports what it compacted", async () => {
    const { reports, run } = handle(setup);
    await run();
    expect(reports.of("info")).toEqual([expect.stringMatching(/^compaction: safeguard \(summarize\) compacted \d+ messages, \d+ -> \d+ tokens\.$/)]);
  });

  it("cancels without a report when pi's signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const { reports, run } = handle(setup, {}, undefined, { ...setup.captured.event, signal: controller.signal });
    expect(await run()).toEqual({ cancel: true });
    expect(reports.all).toEqual([]);
  });
});

describe("session_before_compact when the preset compacts nothing", () => {
  let setup: Setup;
  beforeAll(async () => {
    // rolling evicts only above 80% of the window: a 1M-token window holds the whole session.
    setup = await setUp({ preset: "rolling" }, 1_000_000);
  });
  afterAll(() => tearDown(setup));

  it("cancels by default and says why", async () => {
    const { reports, run } = handle(setup);
    expect(await run()).toEqual({ cancel: true });
    expect(reports.of("warning")).toEqual([expect.stringMatching(/^compaction: Nothing was compacted \(noop\): .* The session was left as it is\.$/)]);
  });

  it("says so as news, not a warning, when pi compacts on its own past its threshold", async () => {
    const event = setup.captured.event;
    // pi's threshold is the window minus its reserveTokens: a large reserve puts the session past it.
    const auto = { ...event, preparation: { ...event.preparation, settings: { ...event.preparation.settings, reserveTokens: 900_000 } } };
    const { reports, run } = handle(setup, {}, undefined, auto);
    expect(await run()).toEqual({ cancel: true });
    expect(reports.of("warning")).toEqual([]);
    expect(reports.of("info")).toEqual([expect.stringMatching(/^compaction: Nothing was compacted \(noop\)/)]);
  });

  it("lets pi summarise instead with fallback 'pi'", async () => {
    const { reports, run } = handle(setup, { fallback: "pi" });
    expect(await run()).toBeUndefined();
    expect(reports.of("warning")[0]).toMatch(/pi will summarise with the model instead\.$/);
  });
});

describe("session_before_compact in a session whose auto-compaction is off", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({ preset: "safeguard" }, 200_000);
  });
  afterAll(() => tearDown(setup));

  /** The captured event with `compaction autocompact off`'s entry at the end of the branch, made automatic or manual. */
  function eventWithSettingOff(auto: boolean, focus?: string) {
    const event = setup.captured.event;
    const last = event.branchEntries.at(-1);
    const off = { type: "custom", customType: "compaction.autoCompact", data: { enabled: false }, id: "a0f0c0e0", parentId: last?.id ?? null, timestamp: new Date(0).toISOString() };
    const reserveTokens = auto ? 190_000 : event.preparation.settings.reserveTokens;
    return {
      ...event,
      branchEntries: [...event.branchEntries, off] as typeof event.branchEntries,
      preparation: { ...event.preparation, settings: { ...event.preparation.settings, reserveTokens } },
      ...(focus === undefined ? {} : { customInstructions: focus }),
    };
  }

  it("cancels pi's automatic compaction, saying auto-compaction is off, even with fallback 'pi'", async () => {
    const { reports, run } = handle(setup, { fallback: "pi" }, undefined, eventWithSettingOff(true));
    expect(await run()).toEqual({ cancel: true });
    expect(reports.of("info")).toEqual([expect.stringContaining("auto-compaction is off for this session")]);
  });

  it("sees a setting the CLI appended to the file while pi held the session (off pi's in-memory branch)", async () => {
    const file = setup.captured.ctx.sessionManager.getSessionFile() as string;
    await appendEntries(file, [autoCompactEntry(false)]);
    const event = setup.captured.event;
    const auto = { ...event, preparation: { ...event.preparation, settings: { ...event.preparation.settings, reserveTokens: 190_000 } } };
    const { reports, run } = handle(setup, {}, undefined, auto);
    expect(await run()).toEqual({ cancel: true });
    expect(reports.of("info")).toEqual([expect.stringContaining("auto-compaction is off for this session")]);
    await appendEntries(file, [autoCompactEntry(true)]);
    expect((await handle(setup, {}, undefined, auto).run())?.compaction).toBeDefined();
  });

  it("still compacts on /compact", async () => {
    const result = await handle(setup, {}, undefined, eventWithSettingOff(true, "the theme work")).run();
    expect(result?.compaction?.details).toMatchObject({ trigger: "manual", customInstruction: "the theme work" });
  });
});

describe("session_before_compact with an invalid config", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({ preset: "rollin" }, 200_000);
  });
  afterAll(() => tearDown(setup));

  it("cancels and reports the config error with its code and suggestion", async () => {
    const { reports, run } = handle(setup);
    expect(await run()).toEqual({ cancel: true });
    const [warning] = reports.of("warning");
    expect(warning).toMatch(/could not load the compaction config: .*\[COMPACTION_PLUGIN_NOT_FOUND\]/s);
    expect(warning).toMatch(/rolling/);
  });
});

describe("session_before_compact with rolling, which evicts and names memory_search", () => {
  let setup: Setup;
  beforeAll(async () => {
    setup = await setUp({ preset: "rolling" }, 120_000);
  });
  afterAll(() => tearDown(setup));

  it("writes the eviction note when the agent has the recall tool", async () => {
    const connected = (): RecallStatus => ({ state: "connected", toolName: "memory_search", connection: {} as never });
    const result = await handle(setup, {}, connected).run();
    expect(result?.compaction?.summary).toMatch(/^\[Context rolled: \d+ messages evicted \(\d+ tokens\)\. Full transcript available via memory_search\./);
    expect(result?.compaction?.details).toMatchObject({ strategy: "rolling", layer: "evict" });
  });

  it("refuses the note when the agent cannot have the tool", async () => {
    const unavailable = (): RecallStatus => ({ state: "unavailable", toolName: "memory_search", reason: "pi's tool allowlist leaves out 'memory_search'" });
    const { reports, run } = handle(setup, {}, unavailable);
    expect(await run()).toEqual({ cancel: true });
    expect(reports.of("warning")[0]).toMatch(/points the agent at 'memory_search', but the agent cannot have that tool: pi's tool allowlist/);
  });
});

describe("session_before_compact passes the preset's warnings on", () => {
  let setup: Setup;
  beforeAll(async () => {
    // layered compacts fully above 95% of the window, and warns that it did.
    setup = await setUp({ preset: "layered" }, 120_000);
  });
  afterAll(() => tearDown(setup));

  it("reports each warning of the run", async () => {
    const { reports, run } = handle(setup);
    const result = await run();
    expect(result?.compaction?.details).toMatchObject({ strategy: "layered", layer: "full" });
    expect(reports.of("warning")).toEqual([expect.stringMatching(/^compaction: \[layered\] full compaction: /)]);
    // No token figure in it: no note on the measure.
    expect(reports.of("info").filter((info) => info.includes("token figures"))).toEqual([]);
  });
});

describe("session_before_compact says which measure its warnings' token figures are in", () => {
  let setup: Setup;
  beforeAll(async () => {
    // A window whose budget binds: safeguard lowers keepRecentTokens and says so in our count.
    setup = await setUp({ preset: "safeguard" }, 30_000);
  });
  afterAll(() => tearDown(setup));

  it("adds a note after the warnings: our count, and the provider's ratio on this session", async () => {
    const { reports, run } = handle(setup);
    await run();
    expect(reports.of("warning")).toContainEqual(expect.stringMatching(/^compaction: \[safeguard\] keepRecentTokens \(20000 in the provider's measure, \d+ in our count\) was lowered to \d+ .* budget of \d+ tokens\.$/));
    expect(reports.of("info")).toContainEqual(expect.stringMatching(/^compaction: the token figures in this warning are our estimate:chars\/4 count; the provider counts \d\.\d\dx that on this session\.$/));
  });
});
