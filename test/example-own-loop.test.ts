/**
 * examples/own-loop/agent.mjs (a host's own loop on the core's HostLoop) runs as docs/hosts/own-loop.md
 * shows: the command prints what the page quotes, figure for figure, and the loop the page shows is
 * the program's own code, line for line and in order.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "./support/markdown.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PAGE = fileURLToPath(new URL("../docs/hosts/own-loop.md", import.meta.url));
const EXAMPLE = fileURLToPath(new URL("../examples/own-loop/agent.mjs", import.meta.url));
const COMMAND = "node examples/own-loop/agent.mjs";
const MARKER = "<!-- run-by: test/example-own-loop.test.ts -->";

/** The page's blocks marked as run by this test: the command, its quoted output, the loop. */
function pageBlocks() {
  const blocks = codeBlocks(PAGE).filter((block) => block.before === MARKER);
  const command = blocks.find((block) => block.lang === "sh");
  const output = blocks.find((block) => block.lang === "" && block.body.startsWith(`$ ${COMMAND}\n`));
  const program = blocks.find((block) => block.lang === "js");
  if (!command || !output || !program) throw new Error("docs/hosts/own-loop.md: expected the command, its output and the loop, each marked run-by this test");
  return { command: command.body.trim(), output: output.body.slice(`$ ${COMMAND}\n`.length), program: program.body };
}

/** The lines of `excerpt` that are not found in `source` in order (each after the one before it). */
function linesNotInOrder(excerpt: string, source: string): string[] {
  const missing: string[] = [];
  let from = 0;
  for (const line of excerpt.split("\n").filter((l) => l.trim() !== "")) {
    const at = source.indexOf(`${line}\n`, from);
    if (at < 0) missing.push(line);
    else from = at + line.length;
  }
  return missing;
}

describe("examples/own-loop/agent.mjs, as docs/hosts/own-loop.md shows it", () => {
  let stdout = "";
  let stderr = "";
  beforeAll(async () => {
    ({ stdout, stderr } = await promisify(execFile)(process.execPath, [EXAMPLE], { cwd: ROOT }));
  });

  it("is the command the page prints", () => {
    expect(pageBlocks().command).toBe(COMMAND);
  });

  it("prints what the page quotes, every figure included, and warns about nothing", () => {
    expect(stderr).toBe("");
    expect(stdout).toBe(`${pageBlocks().output}\n`);
  });

  it("compacts on the way and keeps every request within the window less the reserve", () => {
    expect(stdout.match(/^call \d+: compacted, [\d,]+ -> [\d,]+ tokens$/gm)?.length).toBeGreaterThan(0);
    const [, largest, window] = /largest request ([\d,]+) tokens, context window ([\d,]+)/.exec(stdout)?.map((n) => Number(n.replaceAll(",", ""))) ?? [];
    // The reserve at 32k is an eighth of the window.
    expect(largest).toBeLessThanOrEqual((window as number) - (window as number) / 8);
    expect(stdout).toContain("files the context still names: 14 of 14");
  });

  it("shows the program's own lines as its loop", () => {
    expect(linesNotInOrder(pageBlocks().program, readFileSync(EXAMPLE, "utf8"))).toEqual([]);
  });

  it("notices a line the program does not have (the check itself)", () => {
    expect(linesNotInOrder("const loop = new HostLoop(compactor);", readFileSync(EXAMPLE, "utf8"))).toEqual(["const loop = new HostLoop(compactor);"]);
  });
});
