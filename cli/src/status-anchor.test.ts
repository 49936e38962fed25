/**
 * `context status` right after a compaction shows the After `compact` printed: the newest
 * compaction's recorded After anchors the size until a usage figure is newer (issue 15: one
 * measure for every number a user compares). Runs the CLI in-process on version 3 copies of the
 * real pi sessions (the shipped one, and one with two compactions pi itself wrote).
 */
import { copyFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPiAdapter, createTiktokenCounter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { appendEntries, buildContext, type NewEntry, readSession, upgradeSession } from "@compaction/transcript";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, REAL_SESSION, type Sandbox } from "./test-support/cli-sandbox.js";

const BEFORE_COMPACTION = join(FIXTURES_DIR, "pi-before-compaction.jsonl");

interface Measure {
  readonly base: "usage" | "compaction" | "count";
  readonly counted: number;
  readonly ratio: number;
  readonly perMessage: number;
}
interface Status {
  readonly tokens: number;
  readonly messages: number;
  readonly measure: Measure;
}
interface Report {
  readonly status: string;
  readonly written: boolean;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly measure: Measure;
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

/** Our o200k count of messages, as the CLI counts them (the config's default counter). */
const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createTiktokenCounter());
afterAll(() => tokens.counter.dispose());

/** Puts a version 3 copy of `fixture` where the sandbox's session is. */
async function useFixture(fixture: string): Promise<void> {
  copyFileSync(fixture, sandbox.sessionPath);
  await upgradeSession(sandbox.sessionPath);
  rmSync(`${sandbox.sessionPath}.bak`, { force: true });
}

/** Runs the CLI in-process on the sandbox's session; parses stdout as JSON. */
async function cli<T>(...args: string[]): Promise<T> {
  const { code, stdout, stderr } = await sandbox.runMain([...args, "--session", sandbox.sessionPath]);
  if (code !== 0 && !args.includes("--dry-run")) throw new Error(`compaction ${args.join(" ")} exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as T;
}

async function append(messages: readonly PiMessage[]): Promise<void> {
  await appendEntries(sandbox.sessionPath, messages.map((message) => ({ type: "message", message }) as NewEntry));
}

const userMessage = (text: string): PiMessage => ({ role: "user", content: text, timestamp: Date.now() + 1000 });

describe("context status after compact: the compaction's After anchors the size", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["the shipped session", "safeguard", REAL_SESSION],
    ["the shipped session", "layered", REAL_SESSION],
    ["the shipped session", "sliding-window", REAL_SESSION],
    ["the shipped session", "rolling", REAL_SESSION],
    ["a session pi compacted twice", "safeguard", BEFORE_COMPACTION],
    ["a session pi compacted twice", "sliding-window", BEFORE_COMPACTION],
  ];

  it.each(cases)("%s, %s: status shows the After compact printed, and a second compact starts from it", async (_name, preset, fixture) => {
    await useFixture(fixture);
    const compacted = await cli<Report>("compact", "--preset", preset, "--yes", "--json");
    expect(compacted).toMatchObject({ status: "compacted", written: true });
    expect(compacted.tokensAfter).toBeLessThan(compacted.tokensBefore);

    const status = await cli<Status>("context", "status", "--json");
    expect(status.tokens).toBe(compacted.tokensAfter);
    expect(status.measure).toMatchObject({ base: "compaction", counted: 0 });
    const [newest] = await cli<Array<{ tokensAfter: number }>>("context", "history", "--json");
    expect(newest?.tokensAfter).toBe(compacted.tokensAfter);

    // Before of the next compaction is the same figure, in the same measure.
    const again = await cli<Report>("compact", "--preset", preset, "--dry-run", "--json");
    expect(again.tokensBefore).toBe(status.tokens);
    expect(again.measure).toMatchObject({ base: "compaction", counted: 0 });
  });

  it("adds the calibrated count of the messages appended since, counting them on top of the After", async () => {
    await useFixture(BEFORE_COMPACTION);
    const compacted = await cli<Report>("compact", "--preset", "sliding-window", "--yes", "--json");
    const added = [userMessage("Now run the whole test suite and fix whatever fails."), userMessage("Also update the README's table of presets.")];
    await append(added);
    const status = await cli<Status>("context", "status", "--json");
    expect(status.measure).toMatchObject({ base: "compaction", counted: 2 });
    expect(status.measure.ratio).toBeGreaterThan(1);
    const counted = tokens.total(added);
    expect(status.tokens).toBe(compacted.tokensAfter + Math.round(counted * status.measure.ratio + 2 * status.measure.perMessage));
    const again = await cli<Report>("compact", "--preset", "sliding-window", "--dry-run", "--json");
    expect(again.tokensBefore).toBe(status.tokens);
  });

  it("lets a usage figure newer than the compaction win, as before", async () => {
    await compactShipped();
    const usage = { input: 30_000, output: 1_234, cacheRead: 0, cacheWrite: 0, totalTokens: 31_234 };
    const response = {
      role: "assistant",
      content: [{ type: "text", text: "Done: the suite passes." }],
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage,
      stopReason: "stop",
      timestamp: Date.now() + 2000,
    } as unknown as PiMessage;
    const next = userMessage("Thanks. Commit it.");
    await append([response, { ...next, timestamp: Date.now() + 3000 } as PiMessage]);
    const status = await cli<Status>("context", "status", "--json");
    expect(status.measure).toMatchObject({ base: "usage", counted: 1 });
    expect(status.tokens).toBe(31_234 + Math.round(tokens.total([next]) * status.measure.ratio + status.measure.perMessage));
  });

  it("keeps today's measure after a compaction pi wrote (no recorded After): every message counted and calibrated", async () => {
    await compactShipped();
    // Make the entry pi's own: pi's details hold the files read and modified, not our event.
    const lines = readFileSync(sandbox.sessionPath, "utf8").trimEnd().split("\n");
    const entry = JSON.parse(lines.at(-1) as string) as Record<string, unknown>;
    expect(entry["type"]).toBe("compaction");
    lines[lines.length - 1] = JSON.stringify({ ...entry, details: { readFiles: [], modifiedFiles: [] } });
    writeFileSync(sandbox.sessionPath, `${lines.join("\n")}\n`);

    const status = await cli<Status>("context", "status", "--json");
    const { messages } = buildContext(readSession(sandbox.sessionPath).entries);
    expect(status.measure).toMatchObject({ base: "count", counted: messages.length });
    expect(status.tokens).toBe(tokens.contextTokens(messages).tokens);
    expect(status.tokens).toBe(Math.round(tokens.total(messages) * status.measure.ratio + messages.length * status.measure.perMessage));
  });

  it("says where the figure comes from on the Measure line", async () => {
    await compactShipped();
    await append([userMessage("One more thing.")]);
    const { code, stdout } = await sandbox.runMain(["context", "status", "--session", sandbox.sessionPath]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Measure +(provider's: )?the last compaction's After \+ (raw )?o200k .*on the 1 message since/);
  });
});

/** Compacts the shipped session with the configured preset (safeguard). */
async function compactShipped(): Promise<Report> {
  return await cli<Report>("compact", "--yes", "--json");
}
