import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildContext, readSession } from "@compaction/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const sessionFiles = (): string[] => readdirSync(dirname(sandbox.sessionPath)).filter((name) => name.endsWith(".jsonl"));

describe("compaction session branch", () => {
  it("writes a new file: a header with parentSession = the source, then the source's own lines of the branch", () => {
    const branch = buildContext(readSession(sandbox.sessionPath).entries).branch;
    const at = branch[Math.floor(branch.length / 2)]?.id as string;
    const run = sandbox.run(["session", "branch", "--at", at], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    const created = sessionFiles().map((name) => join(dirname(sandbox.sessionPath), name)).filter((path) => path !== sandbox.sessionPath);
    expect(created).toHaveLength(1);
    const newPath = created[0] as string;
    expect(run.stdout).toContain(newPath);
    const [headerLine, ...lines] = readFileSync(newPath, "utf8").trimEnd().split("\n");
    const header = JSON.parse(headerLine as string) as Record<string, unknown>;
    expect(header).toMatchObject({ type: "session", parentSession: sandbox.sessionPath });
    expect(run.stdout).toContain(String(header["id"]));
    const sourceLines = new Map(
      sandbox.bytes().toString("utf8").split("\n").slice(1).filter((line) => line !== "").map((line) => [(JSON.parse(line) as { id: string }).id, line]),
    );
    const onBranch = branch.slice(0, branch.findIndex((entry) => entry.id === at) + 1).map((entry) => sourceLines.get(entry.id));
    expect(lines).toEqual(onBranch);
  });

  it("refuses without --at and without a terminal: exit 2 with a hint to pass --at, no new file", () => {
    const run = sandbox.run(["session", "branch"], { NO_COLOR: "1" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/\nhint: Pass --at <entry-id>/);
    expect(sessionFiles()).toHaveLength(1);
  });

  it("exits 3 for an entry id that is not in the session", () => {
    const run = sandbox.run(["session", "branch", "--at", "no-such-entry"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("entry `no-such-entry` is not in");
    expect(sessionFiles()).toHaveLength(1);
  });
});
