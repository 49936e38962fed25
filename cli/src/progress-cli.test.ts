/** The progress line of a long load, through `main` with a terminal on stderr. */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "./index.js";
import type { CliIo } from "./io.js";
import { PROGRESS_MIN_BYTES } from "./progress.js";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

/** Grows the session past the progress threshold with custom entries (which add no messages). */
function growSession(): void {
  const lastId = (JSON.parse(sandbox.bytes().toString("utf8").trimEnd().split("\n").at(-1) as string) as { id: string }).id;
  const lines: string[] = [];
  let parent = lastId;
  const filler = "x".repeat(64 * 1024);
  for (let i = 0; i * filler.length < PROGRESS_MIN_BYTES + 1024 * 1024; i++) {
    const id = `f${String(i).padStart(7, "0")}`;
    lines.push(JSON.stringify({ type: "custom", customType: "test.filler", data: { filler }, id, parentId: parent, timestamp: new Date(0).toISOString() }));
    parent = id;
  }
  appendFileSync(sandbox.sessionPath, `${lines.join("\n")}\n`);
}

function terminalIo(): CliIo & { err: () => string; out: () => string } {
  let stdout = "";
  let stderr = "";
  return {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text), isTTY: true },
    stdin: Readable.from([]),
    env: { NO_COLOR: "1", HOME: join(sandbox.root, "home"), COMPACTION_SESSIONS_DIR: sandbox.sessionsDir },
    cwd: sandbox.project,
    err: () => stderr,
    out: () => stdout,
  };
}

describe("progress on a long load", () => {
  it("context status shows the read's progress on a terminal's stderr, ending at 100% and cleared", async () => {
    growSession();
    const io = terminalIo();
    expect(await main(["context", "status"], io)).toBe(0);
    expect(io.err()).toMatch(/Reading [^ ]+\.jsonl +\d+% \(/);
    expect(io.err()).toMatch(/100% \(\d+\.\d \/ \d+\.\d MiB\)/);
    expect(io.err().endsWith("\r\u001b[2K")).toBe(true);
    expect(io.out()).toContain("context (");
  });

  it("shows nothing when stderr is not a terminal", () => {
    growSession();
    const run = sandbox.run(["context", "status"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
  });
});
