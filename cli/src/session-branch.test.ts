import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildContext, readSession } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { main } from "./index.js";
import type { CliIo } from "./io.js";
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

  it("refuses a version 1 file (no entry ids) with the command that upgrades it, and branches once that ran", async () => {
    const v1 = await createSandbox({ version1: true });
    try {
      const refused = v1.run(["session", "branch", "--at", "l00000918"], { NO_COLOR: "1" });
      expect(refused.code).toBe(3);
      const hint = /^hint: Upgrade it first with (compaction session upgrade --session \S+) \(keeps a \.bak copy\)/m.exec(refused.stderr)?.[1];
      expect(hint, refused.stderr).toBe(`compaction session upgrade --session ${v1.sessionPath}`);
      // The hint, typed as printed.
      expect(v1.run((hint as string).split(" ").slice(1)).code).toBe(0);
      expect(v1.run(["session", "branch", "--at", "l00000918"], { NO_COLOR: "1" }).code).toBe(0);
    } finally {
      v1.remove();
    }
  });

    it("refuses without --at and without a terminal: exit 2 with a hint to pass --at, no new file", () => {
    const run = sandbox.run(["session", "branch"], { NO_COLOR: "1" });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/\nhint: Pass --at <entry-id>/);
    expect(sessionFiles()).toHaveLength(1);
  });

  it("prints the new file, its id and the entry as one JSON object with --json", () => {
    const run = sandbox.run(["session", "branch", "--at", "l00000500", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { path: string; id: string; atEntryId: string; from: { path: string } };
    expect(report).toMatchObject({ atEntryId: "l00000500", from: { path: sandbox.sessionPath } });
    const header = JSON.parse(readFileSync(report.path, "utf8").split("\n")[0] as string) as { id: string; parentSession: string };
    expect(header).toMatchObject({ id: report.id, parentSession: sandbox.sessionPath });
  });

  it("exits 3 for an entry id that is not in the session", () => {
    const run = sandbox.run(["session", "branch", "--at", "no-such-entry"], { NO_COLOR: "1" });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("entry `no-such-entry` is not in");
    expect(sessionFiles()).toHaveLength(1);
  });

  it("without --at on a terminal, lists the branch's user messages and branches at the one picked by number", async () => {
    let stdout = "";
    let stderr = "";
    const stdin = Object.assign(Readable.from(["2\n"]), { isTTY: true });
    const io: CliIo = {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin,
      env: { NO_COLOR: "1", HOME: join(sandbox.root, "home"), COMPACTION_SESSIONS_DIR: sandbox.sessionsDir },
      cwd: sandbox.project,
    };
    const code = await main(["session", "branch"], io);
    expect(code).toBe(0);
    const users = buildContext(readSession(sandbox.sessionPath).entries).branch.filter(
      (entry) => entry.type === "message" && entry.message.role === "user",
    );
    const second = users[1]?.id as string;
    expect(stderr).toMatch(new RegExp(`^ +1  ${users[0]?.id}  `, "m"));
    expect(stderr).toMatch(new RegExp(`^ +2  ${second}  `, "m"));
    expect(stderr).toContain(`Branch at which message? [1-${users.length}]`);
    expect(stdout).toContain(`Ends at   entry ${second}`);
    const created = sessionFiles().filter((name) => join(dirname(sandbox.sessionPath), name) !== sandbox.sessionPath);
    expect(created).toHaveLength(1);
    const branched = buildContext(readSession(join(dirname(sandbox.sessionPath), created[0] as string)).entries).branch;
    expect(branched.at(-1)?.id).toBe(second);
  });

  it("on a terminal, refuses an answer that is not one of the numbers: exit 2, no new file", async () => {
    let stderr = "";
    const io: CliIo = {
      stdout: { write: () => true },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: Object.assign(Readable.from(["seven\n"]), { isTTY: true }),
      env: { NO_COLOR: "1", HOME: join(sandbox.root, "home"), COMPACTION_SESSIONS_DIR: sandbox.sessionsDir },
      cwd: sandbox.project,
    };
    expect(await main(["session", "branch"], io)).toBe(2);
    expect(stderr).toContain("Expected a number from 1 to");
    expect(sessionFiles()).toHaveLength(1);
  });
});
