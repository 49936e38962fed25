/**
 * The never-stuck soak. Run: `cd test && npx tsx bench/never-stuck.bench.ts`
 * (part of `npm run bench`). Prints how many steps and compactions it ran.
 *
 * 1. Soak: long generated agent sessions (parallel tool calls, errors, pinned messages, huge tool
 *    outputs) through createContextManager, for every built-in preset and message format, with
 *    the checks of the property test after every step (test/support/session-steps.ts). Any
 *    problem is printed and makes the script exit with code 1.
 * 2. The huge-output case of the issue per preset x format: ten ordinary turns, then a request
 *    whose tool call returns about 300,000 tokens, window 32,000: the status of afterResponse()
 *    and the size of what send() sends.
 */
import { createContextManager } from "@compaction/context-manager";
import { builders, FORMATS, type Format } from "@compaction/core/testing";
import fc from "fast-check";
import { PRESETS } from "../support/never-stuck.js";
import { playSession, stepArb } from "../support/session-steps.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SESSIONS = Number(process.env["SOAK_SESSIONS"] ?? 3);
const STEPS = Number(process.env["SOAK_STEPS"] ?? 400);
const WINDOWS = [8_000, 16_000, 32_000];

const root = mkdtempSync(join(tmpdir(), "never-stuck-bench-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));
let projects = 0;
/** A project folder with a .compactionrc.json for this run. */
function rc(preset: string, format: Format, contextWindow: number, reserveTokens: number): string {
  const dir = join(root, `p${++projects}`);
  mkdirSync(dir);
  const config = { preset, adapter: format, contextWindow, reserveTokens, tokenizer: { counter: "estimate" } };
  writeFileSync(join(dir, ".compactionrc.json"), JSON.stringify(config));
  return dir;
}

let failed = false;
console.log(`\nnever-stuck soak: ${SESSIONS} sessions of ${STEPS} steps per preset x format\n`);
console.log("preset          format     steps  compactions  problems  seconds");
let allSteps = 0;
let allCompactions = 0;
for (const preset of PRESETS) {
  for (const format of FORMATS) {
    const started = performance.now();
    let steps = 0;
    let compactions = 0;
    const problems: string[] = [];
    for (let s = 0; s < SESSIONS; s++) {
      const plan = fc.sample(stepArb, { numRuns: STEPS, seed: 1000 + s });
      const window = WINDOWS[s % WINDOWS.length] as number;
      const manager = await createContextManager<unknown>({ cwd: rc(preset, format, window, Math.floor(window / 8)), messages: [] });
      const outcome = await playSession(manager, format, plan);
      await manager.dispose();
      steps += outcome.steps;
      compactions += outcome.compactions;
      problems.push(...outcome.problems);
    }
    allSteps += steps;
    allCompactions += compactions;
    if (problems.length > 0) failed = true;
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`${preset.padEnd(15)} ${format.padEnd(10)} ${String(steps).padStart(5)}  ${String(compactions).padStart(11)}  ${String(problems.length).padStart(8)}  ${seconds.padStart(7)}`);
    for (const problem of problems.slice(0, 5)) console.log(`  ! ${problem}`);
  }
}
console.log(`\ntotal: ${allSteps} steps, ${allCompactions} compactions\n`);

console.log("huge-output case (window 32,000, budget 15,616; ten turns, then a ~300,000-token tool output)\n");
console.log("preset          format     afterResponse  context tokens  sent tokens  request kept  shrunk");
for (const preset of PRESETS) {
  for (const format of FORMATS) {
    const b = builders(format);
    const manager = await createContextManager<unknown>({ cwd: rc(preset, format, 32_000, 16_384), messages: [] });
    const system = b.system("You are a coding agent.");
    if (system !== undefined) await manager.append(system);
    for (let turn = 0; turn < 10; turn++) {
      await manager.append([b.user(`turn ${turn} ${"q ".repeat(600)}`), b.assistant(`checking ${turn}`, [{ id: `t${turn}` }]), ...b.toolResults([{ id: `t${turn}`, text: "f ".repeat(1200) }]), b.assistant(`done ${turn}`)]);
      await manager.afterResponse();
    }
    const request = "Run the whole test suite and tell me which tests fail.";
    await manager.append([b.user(request), b.assistant("Running it.", [{ id: "huge" }])]);
    await manager.afterResponse();
    await manager.append(b.toolResults([{ id: "huge", text: "testlog line\n".repeat(92_000) }]));
    const result = await manager.afterResponse();
    const sent = manager.requestMessages();
    const sentTokens = manager.compactor.tokens.total(sent);
    const kept = sent.some((m) => manager.compactor.facts.of(m).text === request);
    if (result?.status !== "compacted" || sentTokens > manager.budget || !kept) failed = true;
    console.log(
      `${preset.padEnd(15)} ${format.padEnd(10)} ${String(result?.status).padEnd(13)}  ${String(manager.tokens).padStart(14)}  ${String(sentTokens).padStart(11)}  ${String(kept).padEnd(12)}  ${result?.shrunk?.length ?? 0}`,
    );
    await manager.dispose();
  }
}
if (failed) {
  console.log("\nFAILED: a guarantee did not hold (see above).");
  process.exitCode = 1;
}
