import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { importClaudeCode } from "@compaction/transcript";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { recommend } from "./compare-recommendation.js";
import { CLAUDE_TRANSCRIPT, createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

interface Report {
  session: { path: string; format: string };
  history: {
    view: string;
    compactions: { at: string; trigger: string | null; tokensBefore: number | null }[];
    startsAt: { at: string; reason: string } | null;
  };
  messages: number;
  calls: number;
  contextWindow: number;
  reserveTokens: number;
  counter: string;
  continuity: { cuts: number; needed: number; longMemory: number; pastTokens: number };
  presets: {
    preset: string;
    compactions: number;
    cacheMisses: number;
    cacheHitShare: number;
    billed: { anthropic: number; openai: number };
    inputTokens: number;
    largestRequest: number;
    keptNext: number | null;
    longMemory: number | null;
    latency?: { seconds: number; blocking: { compactions: number; waitedSeconds: number; noWait: number }; background: { compactions: number; waitedSeconds: number; noWait: number } };
  }[];
  cheapest: string | null;
  recommended: { preset: string; why: string } | null;
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const compare = (...args: string[]): Report => {
  const run = sandbox.run(["compare", "--json", ...args]);
  expect(run.stderr).not.toMatch(/compaction: (?!warning)/);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Report;
};

/** The text's lines, every one of which must fit an 80-column terminal. */
const lines = (text: string): string[] => text.trimEnd().split("\n");
/** A labelled heading line and its continuation lines (indented under it), joined as one. */
function labelled(text: string, label: string): string | undefined {
  const all = lines(text);
  const start = all.findIndex((line) => line.startsWith(`${label} `));
  if (start < 0) return undefined;
  const parts = [all[start] as string];
  for (const line of all.slice(start + 1)) {
    if (!/^ {10}/.test(line)) break;
    parts.push(line.trim());
  }
  return parts.join(" ");
}

describe("compaction compare", () => {
  it("replays the real session through each preset at the window given, within the budget, missing the cache only where it compacts", () => {
    const report = compare("--window", "64000", "--presets", "safeguard,rolling");
    // The reserve is the window's own: an eighth of 64,000.
    expect(report).toMatchObject({ messages: 914, contextWindow: 64_000, reserveTokens: 8_000 });
    expect(report.calls).toBeGreaterThan(400);
    expect(report.presets.map((p) => p.preset)).toEqual(["safeguard", "rolling"]);
    for (const preset of report.presets) {
      expect(preset.compactions).toBeGreaterThan(0);
      expect(preset.cacheMisses).toBeLessThanOrEqual(preset.compactions + 1);
      expect(preset.largestRequest).toBeLessThanOrEqual(64_000 - 8_000);
      expect(preset.cacheHitShare).toBeGreaterThan(0.95);
      // Cache pricing bills less than the input itself, and Anthropic's cache writes more than OpenAI's input.
      expect(preset.billed.anthropic).toBeLessThan(preset.inputTokens);
      expect(preset.billed.anthropic).toBeGreaterThan(preset.billed.openai);
    }
    const cheapest = [...report.presets].sort((a, b) => a.billed.anthropic - b.billed.anthropic)[0]?.preset;
    expect(report.cheapest).toBe(cheapest);
  });

  it("measures what the agent needed next that each preset's requests still held, from the earliest threshold a preset compacts at", () => {
    const report = compare("--window", "64000", "--presets", "safeguard,sliding-window");
    // Both compact at 80% of the usable window, (64,000 - 8,000) / 0.9: below the window, and below the budget.
    expect(report.continuity.pastTokens).toBe(Math.floor((0.8 * (64_000 - 8_000)) / 0.9));
    expect(report.continuity.cuts).toBeGreaterThan(6);
    expect(report.continuity.needed).toBeGreaterThan(report.continuity.longMemory);
    expect(report.continuity.longMemory).toBeGreaterThan(0);
    for (const preset of report.presets) {
      expect(preset.keptNext).toBeGreaterThan(0.5);
      expect(preset.keptNext).toBeLessThanOrEqual(1);
      expect(preset.longMemory).not.toBeNull();
    }
  });

  it("says there is nothing to lose when the session fits the window, and that the presets are equal", () => {
    const report = compare("--window", "1000000", "--presets", "safeguard");
    expect(report.continuity).toMatchObject({ cuts: 0, needed: 0, longMemory: 0 });
    expect(report.presets[0]).toMatchObject({ compactions: 0, keptNext: null, longMemory: null });
  });

  it("prints the comparison as a table within 80 columns and writes nothing", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["compare", "--window", "128000", "--presets", "layered"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Window {4}128,000 tokens, 16,000 reserved for the reply$/m);
    expect(run.stdout).toMatch(/^ +cache +billed +largest +kept +long$/m);
    expect(run.stdout).toMatch(/^preset +compactions +misses +input +request +next +memory$/m);
    expect(run.stdout).toMatch(/^layered +\d+ +\d+ +[\d.,M]+ +[\d,]+ +\d+\.\d% +\d+\.\d%$/m);
    expect(labelled(run.stdout, "Recommended")).toBe("Recommended  layered: it is the only preset replayed (--presets names the ones to compare)");
    for (const line of lines(run.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("with --summary-latency, replays on the session's clock with that slow a summary and says how long the agent waited, blocking and in the background", () => {
    const report = compare("--window", "64000", "--presets", "safeguard", "--summary-latency", "30");
    const latency = report.presets[0]?.latency;
    expect(latency?.seconds).toBe(30);
    // safeguard summarises at every compaction: blocking waits at least 30 s for each.
    expect(latency?.blocking.compactions).toBeGreaterThan(0);
    expect(latency?.blocking.waitedSeconds).toBeGreaterThanOrEqual(30 * (latency?.blocking.compactions ?? 0));
    expect(latency?.blocking.noWait).toBe(0);
    expect(latency?.background.waitedSeconds).toBeLessThan(latency?.blocking.waitedSeconds ?? 0);
    expect(compare("--window", "64000", "--presets", "safeguard").presets[0]?.latency).toBeUndefined();
    const text = sandbox.run(["compare", "--window", "64000", "--presets", "safeguard", "--summary-latency", "30"], { NO_COLOR: "1" });
    expect(labelled(text.stdout, "Waiting")).toMatch(/^Waiting {3}with every summary taking 30 s/);
    expect(text.stdout).toMatch(/^ {2}safeguard: blocking \d+ s over \d+ compactions?, 0 with no wait; background \d+ s/m);
    for (const line of lines(text.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
    const bad = sandbox.run(["compare", "--summary-latency", "soon"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--summary-latency expects seconds/);
  });

  it("says its rule in --help, within 80 columns", () => {
    const run = sandbox.run(["compare", "--help"]);
    expect(run.code).toBe(0);
    const help = run.stdout.replace(/\s+/g, " ");
    expect(help).toContain("Of the presets whose 'kept next' is within 1 point of the best, it keeps those whose 'long memory' is within 1 point of the best of them, and of those recommends the one that bills least.");
    expect(help).toContain("Presets within 1% of each other bill the same: then safeguard, the default, where it is among them, else the one listed first.");
    for (const line of lines(run.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it("replays a Claude Code transcript too", () => {
    const path = join(sandbox.root, "claude.jsonl");
    copyFileSync(CLAUDE_TRANSCRIPT, path);
    const report = compare("--session", path, "--window", "32000", "--presets", "safeguard");
    expect(report.session.format).toBe("claude-code");
    expect(report.presets[0]?.compactions).toBeGreaterThan(0);
  });

  it("refuses a preset that does not exist, naming it and the option that named it, before replaying anything", () => {
    const run = sandbox.run(["compare", "--presets", "safeguard,rollin"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/^compaction: Cannot find preset 'rollin' \(named by --presets\)\.$/m);
    expect(run.stderr).toMatch(/rolling/);
  });

  it("refuses a window that is not a positive whole number, or that the config's reserveTokens does not fit, naming the file and key", () => {
    const bad = sandbox.run(["compare", "--window", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--window/);
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ reserveTokens: 16_384 }));
    const small = sandbox.run(["compare", "--window", "16000"]);
    expect(small.code).toBe(4);
    expect(small.stderr).toMatch(/reserve \(reserveTokens in .*\.compactionrc\.json, \/reserveTokens\) is 16384 tokens, which does not fit the 16,000-token context window/);
  });

  it("replays a small model's window on the window's own reserve when the config sets none", () => {
    const report = compare("--window", "16000", "--presets", "safeguard");
    expect(report.reserveTokens).toBe(2_000);
    expect(report.presets[0]?.compactions).toBeGreaterThan(0);
    expect(report.presets[0]?.largestRequest).toBeLessThanOrEqual(16_000 - 2_000);
  });

  describe("with --skip-corrupt past a corrupt line", () => {
    /** A copy of `file` with a line that is not JSON after its `after`-th line. */
    const corrupt = (file: string, after: number): string => {
      const path = join(sandbox.root, `corrupt-${file.replace(/.*\//, "")}`);
      const text = readFileSync(file, "utf8").split("\n");
      writeFileSync(path, [...text.slice(0, after), '{"broken', ...text.slice(after)].join("\n"));
      return path;
    };

    it.each([
      ["a pi session", () => sandbox.sessionPath],
      ["a Claude Code transcript", () => CLAUDE_TRANSCRIPT],
    ])("reports the skipped line of %s once", (_kind, file) => {
      const path = corrupt(file(), 20);
      const run = sandbox.run(["compare", "--skip-corrupt", "--session", path, "--window", "1000000", "--presets", "safeguard"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stderr.match(/skipped line/g)).toEqual(["skipped line"]);
      expect(run.stderr).toContain(`compaction: skipped line 21 of ${path}: `);
    });
  });
});

describe("compare's recommendation (the rule)", () => {
  /** A row: billed input, kept next and long memory in percent (null: not measured). */
  const row = (preset: string, billed: number, keptNext: number | null, longMemory: number | null, compactions = 1) => ({
    preset,
    compactions,
    billed: { anthropic: billed },
    keptNext: keptNext === null ? null : keptNext / 100,
    longMemory: longMemory === null ? null : longMemory / 100,
  });

  it.each([
    ["nothing replayed", [], null],
    ["one preset", [row("rolling", 200, 90, 50)], { preset: "rolling", why: "it is the only preset replayed (--presets names the ones to compare)" }],
    [
      "equal rows: the default",
      [row("layered", 100, 95, 70), row("safeguard", 100, 95, 70), row("rolling", 100, 95, 70)],
      { preset: "safeguard", why: "the presets keep as much (within a point) and bill the same (within 1%); the tie goes to the default" },
    ],
    [
      "equal rows without the default: the first listed",
      [row("rolling", 100, 95, 70), row("layered", 100.5, 95.5, 70)],
      { preset: "rolling", why: "the presets keep as much (within a point) and bill the same (within 1%); the tie goes to the one listed first" },
    ],
    [
      "no preset compacted",
      [row("safeguard", 100, null, null, 0), row("rolling", 100, null, null, 0)],
      { preset: "safeguard", why: "no preset compacted, so all send the same requests and bill the same (within 1%); the tie goes to the default" },
    ],
    [
      "keeping as much, the cheaper one",
      [row("safeguard", 120, 95, 70), row("sliding-window", 100, 95.5, 70.5)],
      { preset: "sliding-window", why: "the presets keep as much (within a point); it bills least, 17% less than the next" },
    ],
    [
      "keeping as much and billing within 1%, the default though dearer",
      [row("rolling", 100, 95, 70), row("safeguard", 100.9, 95, 70), row("layered", 150, 95, 70)],
      { preset: "safeguard", why: "the presets keep as much (within a point); it bills least, 33% less than the next; rolling bills as little, and the tie goes to the default" },
    ],
    [
      "the cheapest keeping more than a point less of what was needed next: the one keeping the most",
      [row("safeguard", 100, 94.7, 70), row("sliding-window", 115, 96.2, 70)],
      { preset: "sliding-window", why: "it keeps the most; safeguard bills 13% less but keeps 1.5 points less of what the agent needed next" },
    ],
    [
      "kept next within a point, long memory more than a point less",
      [row("safeguard", 100, 96, 60), row("layered", 130, 96.5, 80)],
      { preset: "layered", why: "it keeps the most; safeguard bills 23% less but keeps 20.0 points less long memory" },
    ],
    [
      "the one keeping the most is the cheapest too",
      [row("safeguard", 130, 90, 60), row("rolling", 100, 99, 80)],
      { preset: "rolling", why: "it keeps the most and bills least" },
    ],
    [
      "one keeping less but billing within 1% of the one keeping the most: no saving to name",
      [row("safeguard", 99.5, 90, 60), row("rolling", 100, 99, 80)],
      { preset: "rolling", why: "it keeps the most and bills least" },
    ],
  ])("%s", (_name, presets, expected) => {
    expect(recommend(presets)).toEqual(expected);
  });
});

const SHIPPED = fileURLToPath(new URL("../../examples/sessions/pi-large-session.jsonl", import.meta.url));
const CLI_README = fileURLToPath(new URL("../README.md", import.meta.url));

describe("compaction compare on the shipped session at 64k", () => {
  // One run of each, shared: a replay of the four presets takes seconds.
  let shipped: Sandbox;
  let text: string;
  let report: Report;
  beforeAll(async () => {
    shipped = await createSandbox();
    // Where a clone has it, so the text shows the path the README quotes.
    const copy = join(shipped.project, "examples", "sessions", "pi-large-session.jsonl");
    mkdirSync(dirname(copy), { recursive: true });
    copyFileSync(SHIPPED, copy);
    const args = ["compare", "--session", "examples/sessions/pi-large-session.jsonl", "--window", "64000"];
    const run = shipped.run(args, { NO_COLOR: "1" });
    expect(run.stderr).toBe("");
    text = run.stdout;
    report = JSON.parse(shipped.run([...args, "--json"]).stdout) as Report;
  });
  afterAll(() => shipped.remove());

  it("recommends the preset that keeps the most, over the cheaper safeguard, and says what the saving would lose", () => {
    const [safeguard, layered, sliding, rolling] = report.presets;
    // Safeguard bills least but keeps more than a point less of what the agent needed next ...
    expect(report.cheapest).toBe("safeguard");
    const best = Math.max(...report.presets.map((p) => p.keptNext ?? 0));
    expect(safeguard?.keptNext).toBeLessThan(best - 0.01);
    // ... layered keeps as much next but less long memory; sliding-window and rolling keep the most, sliding-window for less.
    expect(layered?.keptNext).toBeGreaterThanOrEqual(best - 0.01);
    expect(layered?.longMemory).toBeLessThan((sliding?.longMemory ?? 0) - 0.01);
    expect(Math.abs((sliding?.keptNext ?? 0) - (rolling?.keptNext ?? 0))).toBeLessThanOrEqual(0.01);
    expect(Math.abs((sliding?.longMemory ?? 0) - (rolling?.longMemory ?? 0))).toBeLessThanOrEqual(0.01);
    expect(sliding?.billed.anthropic).toBeLessThan((rolling?.billed.anthropic ?? 0) * 0.99);
    expect(report.recommended?.preset).toBe("sliding-window");
    const saving = Math.round((1 - (safeguard?.billed.anthropic ?? 0) / (sliding?.billed.anthropic ?? 1)) * 100);
    expect(report.recommended?.why).toBe(`it keeps the most; safeguard bills ${saving}% less but keeps ${points(sliding?.keptNext, safeguard?.keptNext)} points less of what the agent needed next`);
    expect(labelled(text, "Recommended")).toBe(`Recommended  sliding-window: ${report.recommended?.why}`);
  });

  it("fits every line in 80 columns, and says what each column means", () => {
    for (const line of lines(text)) expect(line.length, line).toBeLessThanOrEqual(80);
    for (const column of ["compactions", "cache misses", "billed input", "largest request", "kept next", "long memory"]) expect(text).toMatch(new RegExp(`^${column}: `, "m"));
    expect(text.replace(/\s+/g, " ")).toContain(`kept next: at ${report.continuity.cuts} model calls past ${report.continuity.pastTokens.toLocaleString("en-US")} tokens (the earliest a preset compacts)`);
    expect(text).not.toMatch(/our count|set aside/);
  });

  it("is what cli/README.md quotes", () => {
    const readme = readFileSync(CLI_README, "utf8");
    const command = "$ npx compaction compare --session examples/sessions/pi-large-session.jsonl --window 64000\n";
    const start = readme.indexOf(command);
    expect(start).toBeGreaterThan(0);
    const quoted = readme.slice(start + command.length, readme.indexOf("```", start));
    expect(quoted).toBe(text);
  });

  it("is the command docs/choosing-a-preset.md gives, with the recommendation it names", () => {
    const page = readFileSync(fileURLToPath(new URL("../../docs/choosing-a-preset.md", import.meta.url)), "utf8");
    expect(page).toContain("```sh\nnpx compaction compare --session examples/sessions/pi-large-session.jsonl --window 64000\n```");
    expect(page).toContain(`at 64k it recommends ${report.recommended?.preset ?? "nothing"},`);
  });
});

describe("compaction compare on claude-code-log at 64k, where the presets compact below the window", () => {
  it("measures what each compaction lost, and recommends the preset that kept the most over the cheaper ones", () => {
    const path = join(sandbox.root, "claude-code-log.jsonl");
    copyFileSync(CLAUDE_TRANSCRIPT, path);
    const run = sandbox.run(["compare", "--session", path, "--window", "64000"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    const report = compare("--session", path, "--window", "64000");
    // The whole history stays under the window but past the thresholds: every preset compacts
    // (layered only once the context reaches the window less the reserve: its layers below that
    // prune or decline).
    expect(report.presets.map((p) => [p.preset, p.compactions > 0])).toEqual([
      ["safeguard", true],
      ["layered", true],
      ["sliding-window", true],
      ["rolling", true],
    ]);
    expect(report.continuity.pastTokens).toBeLessThan(64_000 - 8_000);
    expect(report.continuity.cuts).toBeGreaterThan(0);
    // Layered, which compacted last, held all of it.
    expect(report.presets[1]).toMatchObject({ keptNext: 1, longMemory: 1 });
    for (const preset of report.presets) expect(preset.keptNext).not.toBeNull();
    expect(run.stdout).not.toMatch(/never outgrows|no request left anything out/);
    expect(run.stdout).toMatch(/^kept next: at \d+ model calls past [\d,]+ tokens/m);
    expect(report.recommended?.preset).toBe("layered");
    expect(report.recommended?.why).toMatch(/^it keeps the most; safeguard bills \d+% less but keeps [\d.]+ points less /);
    for (const line of lines(run.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it("says, where no preset compacts, that every request held the whole session and the presets are equal", () => {
    const path = join(sandbox.root, "claude-code-log.jsonl");
    copyFileSync(CLAUDE_TRANSCRIPT, path);
    const run = sandbox.run(["compare", "--session", path, "--window", "200000", "--presets", "rolling,safeguard"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout.replace(/\s+/g, " ")).toMatch(/kept next, long memory: not measured \(-\): no preset compacted: the session never grows past [\d,]+ tokens, the earliest a preset compacts, so every request held all of it\./);
    expect(labelled(run.stdout, "Recommended")).toBe(
      "Recommended  safeguard: no preset compacted, so all send the same requests and bill the same (within 1%); the tie goes to the default",
    );
  });
});

/** The difference of two shares in points, as the table rounds them. */
const points = (high: number | null | undefined, low: number | null | undefined): string => ((Math.round((high ?? 0) * 1000) - Math.round((low ?? 0) * 1000)) / 10).toFixed(1);

/** The real Claude Code transcripts with real compactions, whose lines before each boundary stay in the file. */
const COMPACTED = ["claude-code-entire-review-847ff7d2.jsonl", "claude-code-entire-attribution-6113e919.jsonl", "claude-code-entire-openclaw-ca8cc13b.jsonl"];

type Raw = Record<string, any>;
/** Every line of a file with its 1-based number. */
const numbered = (path: string): { line: number; value: Raw }[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text }))
    .filter(({ text }) => text.trim() !== "")
    .map(({ line, text }) => ({ line, value: JSON.parse(text) as Raw }));

/**
 * Counted from the raw lines: the conversation's messages (main-context user lines but the
 * compaction summaries, one message per assistant response id) and its model calls (an assistant
 * message after anything else).
 */
function conversation(path: string): { messages: number; calls: number } {
  const roles: string[] = [];
  const responses = new Set<string>();
  for (const { value } of numbered(path)) {
    if ((value.type !== "user" && value.type !== "assistant") || value.isSidechain === true || value.isCompactSummary === true) continue;
    if (value.type === "assistant") {
      if (responses.has(value.message.id)) continue;
      responses.add(value.message.id);
    }
    roles.push(value.type);
  }
  return { messages: roles.length, calls: roles.filter((role, i) => role === "assistant" && i > 0 && roles[i - 1] !== "assistant").length };
}

describe("compaction compare on a Claude Code transcript with real compactions", () => {
  it.each(COMPACTED)("replays the whole conversation of a copy of %s, before and after each boundary, through its own compactions", (file) => {
    const path = join(sandbox.root, file);
    copyFileSync(join(FIXTURES_DIR, file), path);
    const report = compare("--session", path, "--window", "64000", "--presets", "safeguard");
    const expected = conversation(path);
    expect(report).toMatchObject({ messages: expected.messages, calls: expected.calls });
    // More than the context after the latest compaction, which is all it replayed before.
    expect(report.messages).toBeGreaterThan(importClaudeCode(path).messages.length);
    const boundaries = numbered(path).filter(({ value }) => value.subtype === "compact_boundary");
    expect(report.history).toEqual({
      view: "whole",
      compactions: boundaries.map(({ line, value }) => ({ at: `line ${line}`, trigger: "auto", tokensBefore: value.compactMetadata.preTokens })),
      startsAt: null,
    });
    // Each real compaction happened past 150k tokens: the replay at 64k compacts on its own.
    expect(report.presets[0]?.compactions).toBeGreaterThanOrEqual(boundaries.length);
  });

  it("names the recording's own compactions beside the presets in the table's heading", () => {
    const path = join(sandbox.root, "attribution.jsonl");
    copyFileSync(join(FIXTURES_DIR, "claude-code-entire-attribution-6113e919.jsonl"), path);
    const run = sandbox.run(["compare", "--session", path, "--window", "64000", "--presets", "layered"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(labelled(run.stdout, "Session")).toBe(`Session   ${path} (claude-code: 483 messages, 226 model calls)`);
    expect(labelled(run.stdout, "History")).toBe(
      "History   the whole conversation, through its own 3 compactions (auto, at 156,699, 155,241 and 155,413 tokens by its count): not applied, since each preset compacts on its own, and their summaries left out",
    );
    for (const line of lines(run.stdout)) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  describe("whose boundary does not join what came before it", () => {
    const line = (value: Record<string, unknown>) => JSON.stringify({ isSidechain: false, sessionId: "generated", timestamp: "2025-07-01T10:00:00.000Z", ...value });
    const lines = [
      line({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "Rename parseConfig to readConfig in src/config.ts" } }),
      line({ type: "assistant", uuid: "a1", parentUuid: "u1", message: { id: "msg_a1", role: "assistant", content: [{ type: "text", text: "Done: src/config.ts now exports readConfig." }] } }),
      line({ type: "system", subtype: "compact_boundary", uuid: "b1", parentUuid: null, logicalParentUuid: "not-in-this-file", compactMetadata: { trigger: "auto", preTokens: 150000 } }),
      line({ type: "user", uuid: "s1", parentUuid: "b1", isCompactSummary: true, message: { role: "user", content: "This session is being continued from a previous conversation. Summary: readConfig rename." } }),
      line({ type: "user", uuid: "u2", parentUuid: "s1", message: { role: "user", content: "Now run the tests" } }),
      line({ type: "assistant", uuid: "a2", parentUuid: "u2", message: { id: "msg_a2", role: "assistant", content: [{ type: "text", text: "The tests pass." }] } }),
    ];
    const write = (): string => {
      const path = join(sandbox.root, "broken-join.jsonl");
      writeFileSync(path, `${lines.join("\n")}\n`);
      return path;
    };

    it("fails with exit 3, naming the line and the missing uuid, and the flag that reads past it", () => {
      const path = write();
      const run = sandbox.run(["compare", "--session", path, "--presets", "safeguard"], { NO_COLOR: "1" });
      expect(run.code).toBe(3);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`compaction: ${path}:3: the compaction boundary names logicalParentUuid "not-in-this-file", which no line of the file has`);
      expect(run.stderr).toMatch(/hint: .*--skip-corrupt/);
    });

    it("with --skip-corrupt replays from that compaction on, its summary first, and says so on stderr and in the report", () => {
      const path = write();
      const run = sandbox.run(["compare", "--json", "--skip-corrupt", "--session", path, "--presets", "safeguard"]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`compaction: warning: ${path}:3: the compaction boundary names logicalParentUuid "not-in-this-file"`);
      const report = JSON.parse(run.stdout) as Report;
      expect(report).toMatchObject({ messages: 3, calls: 1 });
      expect(report.history.compactions).toEqual([]);
      expect(report.history.startsAt?.at).toBe("line 3");
      expect(report.history.startsAt?.reason).toMatch(/the 2 messages before it were left out/);
    });
  });
});

describe("compaction compare on a pi session with compactions of its own", () => {
  it("replays the branch's every message and lists the session's compactions with their tokensBefore", () => {
    const path = join(sandbox.root, "before-compaction.jsonl");
    copyFileSync(join(FIXTURES_DIR, "pi-before-compaction.jsonl"), path);
    const report = compare("--session", path, "--window", "1000000", "--presets", "safeguard");
    const compactions = numbered(path).filter(({ value }) => value.type === "compaction");
    expect(compactions).toHaveLength(2);
    expect(report.history.view).toBe("whole");
    expect(report.history.compactions.map((c) => c.tokensBefore)).toEqual(compactions.map(({ value }) => value.tokensBefore));
  });
});
