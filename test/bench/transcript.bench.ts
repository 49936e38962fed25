/**
 * Transcript loading benchmark. Run: `cd test && npx tsx bench/transcript.bench.ts`
 * (`TRANSCRIPT_BENCH_MIB=20` for a smaller file while trying things out).
 *
 * It writes a ~100 MiB pi session (JSONL version 3, a compaction every 500 turns) into a
 * temporary directory, in two variants:
 *  - "settings after boundary": model and thinking level are written right after the latest
 *    compaction, so the boundary load can stop at the compaction's first kept entry;
 *  - "worst case": nothing after the latest compaction sets the thinking level, and the only
 *    thinking level change on the branch is at the session start, so the boundary load has to
 *    walk the whole branch back to the root (it keeps nothing past the boundary while doing so).
 *
 * For each variant it checks that `loadBoundary` gives the same messages, model and thinking
 * level as pi's `SessionManager.open(path).buildSessionContext()` (and so does our full parse),
 * then times, in this process: pi open + build, pi's one-parse path, our full parse
 * (readSession + buildContext) and our boundary load; then measures memory of each loader in a
 * fresh child process, once with the default heap and once with a 64 MiB heap.
 * Target (issue): loadBoundary at least 10x faster than pi, its memory bounded by the part
 * after the latest compaction, not by the file size.
 */
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { buildContext, loadBoundary, readSession } from "@compaction/transcript";
import { FIXTURES_DIR, PI_FIXTURES } from "@compaction/fixtures";
import { SessionManager, buildSessionContext, parseSessionEntries } from "@mariozechner/pi-coding-agent";

const MIB = 1024 * 1024;
const TARGET_BYTES = Number(process.env["TRANSCRIPT_BENCH_MIB"] ?? 100) * MIB;
const TURNS_PER_COMPACTION = 500;
/** A compaction keeps this many turns before it (its firstKeptEntryId is the oldest kept turn's user message). */
const KEPT_TURNS = 3;
const MODEL_CHANGE_EVERY = 211; // turns
const THINKING_CHANGE_EVERY = 307; // turns, "settings after boundary" variant only
const SLOW_RUNS = 5;
const FAST_RUNS = 25;
const SPEEDUP_TARGET = 10;
const SMALL_HEAP_MIB = 64;
/**
 * Memory rule for loadBoundary: the heap it keeps and the RSS it adds are within MEMORY_FACTOR
 * times the boundary part (parsed entries take 2-3x their JSON), plus a fixed allowance: 8 MiB
 * for the heap, 32 MiB for RSS (one 1 MiB read block, reused, and V8's young generation, which
 * grows to about 16 MiB under the churn of a walk to the root and stays there, whatever the
 * file's size). A loader holding the file needs several times its size.
 */
const MEMORY_FACTOR = 4;
const HEAP_ALLOWANCE = 8 * MIB;
const RSS_ALLOWANCE = 32 * MIB;
/** The file for the scaling check: the same tail, this fraction of the size. */
const SCALE_FRACTION = 0.25;

// ---------------------------------------------------------------------------------------------
// Realistic content, taken from the real pi sessions

type Json = Record<string, unknown>;

interface Pools {
  userTexts: string[];
  assistantTexts: string[];
  thinkingTexts: string[];
  toolCalls: { name: string; arguments: unknown }[];
  toolOutputs: string[];
  summaries: string[];
}

function harvestPools(): Pools {
  const pools: Pools = { userTexts: [], assistantTexts: [], thinkingTexts: [], toolCalls: [], toolOutputs: [], summaries: [] };
  for (const file of PI_FIXTURES) {
    for (const line of readFileSync(join(FIXTURES_DIR, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const entry = JSON.parse(line) as Json;
      if (entry["type"] === "compaction" && typeof entry["summary"] === "string") pools.summaries.push(entry["summary"]);
      if (entry["type"] !== "message") continue;
      const message = entry["message"] as Json;
      const blocks = Array.isArray(message["content"]) ? (message["content"] as Json[]) : [];
      const texts = blocks.filter((b) => b["type"] === "text" && typeof b["text"] === "string").map((b) => b["text"] as string);
      if (message["role"] === "user") pools.userTexts.push(...texts);
      if (message["role"] === "toolResult") pools.toolOutputs.push(...texts.filter((t) => t.length > 200));
      if (message["role"] === "assistant") {
        pools.assistantTexts.push(...texts.filter((t) => t.length < 4000));
        for (const block of blocks) {
          if (block["type"] === "thinking" && typeof block["thinking"] === "string") pools.thinkingTexts.push(block["thinking"]);
          if (block["type"] === "toolCall") pools.toolCalls.push({ name: String(block["name"]), arguments: block["arguments"] });
        }
      }
    }
  }
  for (const [name, pool] of Object.entries(pools)) {
    if ((pool as unknown[]).length === 0) throw new Error(`Expected the real pi fixtures in ${FIXTURES_DIR} to give ${name}, found none.`);
  }
  return pools;
}

// ---------------------------------------------------------------------------------------------
// Session generation: lines written straight to a buffered stream, in pi's key order

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Variant {
  readonly name: string;
  /** Write a model_change and thinking_level_change right after the latest compaction. */
  readonly settingsAfterBoundary: boolean;
  /** Write occasional thinking_level_change entries in the body (else only one at the session start). */
  readonly thinkingChanges: boolean;
}

const VARIANTS: readonly Variant[] = [
  { name: "settings after boundary", settingsAfterBoundary: true, thinkingChanges: true },
  { name: "worst case (no settings after boundary)", settingsAfterBoundary: false, thinkingChanges: false },
];

interface GeneratedSession {
  path: string;
  bytes: number;
  entries: number;
  compactions: number;
  turns: number;
  latestCompactionId: string;
  /** Byte offsets of the latest compaction's line and of its first kept entry's line. */
  compactionOffset: number;
  firstKeptOffset: number;
}

const MODELS = [
  { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" },
  { api: "openai-responses", provider: "openai", model: "gpt-5.1-codex" },
] as const;
const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high"] as const;

async function generateSession(path: string, variant: Variant, pools: Pools, targetBytes: number): Promise<GeneratedSession> {
  const random = prng(0x5e55_10a7);
  const pick = <T>(pool: readonly T[]): T => pool[Math.floor(random() * pool.length)] as T;
  const ids = new Set<string>();
  const newId = (): string => {
    for (;;) {
      const id = Math.floor(random() * 0x1_0000_0000).toString(16).padStart(8, "0");
      if (!ids.has(id)) {
        ids.add(id);
        return id;
      }
    }
  };
  const stream = createWriteStream(path, { highWaterMark: 4 * MIB });
  let bytes = 0;
  let entries = 0;
  let parentId: string | null = null;
  let clock = Date.parse("2025-12-01T09:00:00.000Z");
  const write = async (line: string): Promise<void> => {
    bytes += Buffer.byteLength(line) + 1;
    if (!stream.write(line + "\n")) await once(stream, "drain");
  };
  /** Writes an entry as pi does: type, id, parentId, timestamp, then the fields. Returns its id and offset. */
  const entry = async (type: string, fields: Json): Promise<{ id: string; offset: number }> => {
    const id = newId();
    const offset = bytes;
    clock += 200 + Math.floor(random() * 20_000);
    await write(JSON.stringify({ type, id, parentId, timestamp: new Date(clock).toISOString(), ...fields }));
    parentId = id;
    entries++;
    return { id, offset };
  };

  let model: (typeof MODELS)[number] = MODELS[0];
  let contextTokens = 12_000;
  const usage = (output: number): Json => {
    const input = 3 + Math.floor(random() * 40);
    const cacheWrite = 200 + Math.floor(random() * 3000);
    contextTokens += cacheWrite + output;
    const cacheRead = contextTokens;
    const cost = { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 0.3e-6, cacheWrite: cacheWrite * 3.75e-6 };
    return {
      input,
      output,
      cacheRead,
      cacheWrite,
      totalTokens: input + output + cacheRead + cacheWrite,
      cost: { ...cost, total: cost.input + cost.output + cost.cacheRead + cost.cacheWrite },
    };
  };
  const toolOutput = (): string => {
    const want = 1000 + Math.floor(random() * 5000); // a few KB
    let text = pick(pools.toolOutputs);
    while (text.length < want) text += "\n" + pick(pools.toolOutputs);
    return text.slice(0, want);
  };

  const userIds: { id: string; offset: number }[] = [];
  let turns = 0;
  const turn = async (): Promise<void> => {
    turns++;
    if (turns % MODEL_CHANGE_EVERY === 0) {
      model = model === MODELS[0] ? MODELS[1] : MODELS[0];
      await entry("model_change", { provider: model.provider, modelId: model.model });
    }
    if (variant.thinkingChanges && turns % THINKING_CHANGE_EVERY === 0) {
      await entry("thinking_level_change", { thinkingLevel: pick(THINKING_LEVELS) });
    }
    userIds.push(await entry("message", { message: { role: "user", content: [{ type: "text", text: pick(pools.userTexts) }], timestamp: clock } }));
    if (userIds.length > KEPT_TURNS) userIds.shift();
    const calls = Array.from({ length: random() < 0.3 ? 2 : 1 }, () => {
      const call = pick(pools.toolCalls);
      return { type: "toolCall", id: `toolu_${newId()}${newId()}`, name: call.name, arguments: call.arguments };
    });
    const thinking = random() < 0.2 ? [{ type: "thinking", thinking: pick(pools.thinkingTexts) }] : [];
    const first = { role: "assistant", content: [...thinking, { type: "text", text: pick(pools.assistantTexts) }, ...calls] };
    await entry("message", { message: { ...first, ...model, usage: usage(150), stopReason: "toolUse", timestamp: clock } });
    for (const call of calls) {
      const result = { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text: toolOutput() }] };
      await entry("message", { message: { ...result, isError: random() < 0.05, timestamp: clock } });
    }
    const last = { role: "assistant", content: [{ type: "text", text: pick(pools.assistantTexts) }], ...model, usage: usage(400) };
    await entry("message", { message: { ...last, stopReason: "stop", timestamp: clock } });
  };
  const settings = async (): Promise<void> => {
    await entry("model_change", { provider: model.provider, modelId: model.model });
    await entry("thinking_level_change", { thinkingLevel: "medium" });
  };

  await write(JSON.stringify({ type: "session", version: 3, id: "019ad2f0-7c1e-7a6b-9d3e-5f1c2b3a4d5e", timestamp: new Date(clock).toISOString(), cwd: "/home/dev/project" }));
  await settings(); // pi writes the model and thinking level when a session starts
  let compactions = 0;
  let latest = { id: "", offset: 0 };
  let firstKeptOffset = 0;
  let isLatest = false;
  for (;;) {
    const segmentStart = bytes;
    for (let i = 0; i < TURNS_PER_COMPACTION; i++) await turn();
    if (isLatest) break;
    // The next segment will be about as long as this one: if it reaches the target, this compaction is the latest.
    isLatest = 2 * bytes - segmentStart >= targetBytes;
    const firstKept = userIds[0] as { id: string; offset: number };
    latest = await entry("compaction", {
      summary: pick(pools.summaries),
      firstKeptEntryId: firstKept.id,
      tokensBefore: contextTokens,
      details: { readFiles: ["packages/coding-agent/src/core/session-manager.ts"], modifiedFiles: ["packages/coding-agent/src/core/agent-session.ts"] },
    });
    firstKeptOffset = firstKept.offset;
    compactions++;
    contextTokens = 12_000;
    if (isLatest && variant.settingsAfterBoundary) await settings();
  }
  stream.end();
  await once(stream, "finish");
  return { path, bytes, entries, compactions, turns, latestCompactionId: latest.id, compactionOffset: latest.offset, firstKeptOffset };
}

// ---------------------------------------------------------------------------------------------
// The loaders

interface Loaded {
  messages: unknown[];
  model: unknown;
  thinkingLevel: string;
}

interface Loader {
  readonly key: "pi" | "piParse" | "full" | "boundary";
  readonly label: string;
  readonly load: (path: string) => Loaded;
}

const LOADERS: readonly Loader[] = [
  { key: "pi", label: "pi SessionManager.open + buildSessionContext", load: (path) => SessionManager.open(path).buildSessionContext() },
  {
    key: "piParse",
    label: "pi one parse (parseSessionEntries + buildSessionContext)",
    load: (path) => {
      const entries = parseSessionEntries(readFileSync(path, "utf8")).filter((e) => e.type !== "session");
      return buildSessionContext(entries as Parameters<typeof buildSessionContext>[0]);
    },
  },
  { key: "full", label: "ours readSession + buildContext (full parse)", load: (path) => buildContext(readSession(path).entries) },
  { key: "boundary", label: "ours loadBoundary", load: (path) => loadBoundary(path) },
];

function loader(key: Loader["key"]): Loader {
  return LOADERS.find((l) => l.key === key) as Loader;
}

/** Aborts unless every loader gives pi's messages, model and thinking level, and loadBoundary takes the fast path. */
function checkSameContext(session: GeneratedSession): void {
  const expected = loader("pi").load(session.path);
  for (const candidate of LOADERS.slice(1)) {
    const got = candidate.load(session.path);
    for (const field of ["model", "thinkingLevel"] as const) {
      if (!isDeepStrictEqual(got[field], expected[field])) {
        abort(`${candidate.label} gives ${field} ${JSON.stringify(got[field])}, pi gives ${JSON.stringify(expected[field])} (${session.path}).`);
      }
    }
    if (!isDeepStrictEqual(got.messages, expected.messages)) {
      const count = Math.max(got.messages.length, expected.messages.length);
      let at = 0;
      while (at < count && isDeepStrictEqual(got.messages[at], expected.messages[at])) at++;
      abort(
        `${candidate.label} gives ${got.messages.length} messages, pi gives ${expected.messages.length}; they differ first at index ${at}:\n` +
          `  ours: ${JSON.stringify(got.messages[at])?.slice(0, 300)}\n  pi:   ${JSON.stringify(expected.messages[at])?.slice(0, 300)}`,
      );
    }
  }
  const boundary = loadBoundary(session.path);
  if (boundary.fullRead) abort(`loadBoundary read ${session.path} whole (fullRead), so the fast path is not being measured.`);
  if (boundary.compaction?.id !== session.latestCompactionId) {
    abort(`loadBoundary found compaction ${boundary.compaction?.id}, expected the latest one written, ${session.latestCompactionId}.`);
  }
  console.log(`  same context as pi: ${expected.messages.length} messages, model ${JSON.stringify(expected.model)}, thinking "${expected.thinkingLevel}"`);
}

/** Stops the benchmark (the temporary directory is still removed). */
class BenchAbort extends Error {}

function abort(message: string): never {
  throw new BenchAbort(`the loaders disagree, so timings would compare different work.\n${message}`);
}

// ---------------------------------------------------------------------------------------------
// Timing

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

interface Stats {
  median: number;
  min: number;
}

function stats(values: readonly number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number };
}

/** Milliseconds per run of each loader, taken in rounds (one run of each per round) after a GC each. */
function timeLoaders(path: string): Map<Loader["key"], Stats> {
  const samples = new Map<Loader["key"], number[]>(LOADERS.map((l) => [l.key, []]));
  for (let round = 0; round < FAST_RUNS; round++) {
    for (const { key, load } of LOADERS) {
      if (key !== "boundary" && round >= SLOW_RUNS) continue;
      gc();
      const start = process.hrtime.bigint();
      load(path);
      samples.get(key)?.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return new Map([...samples].map(([key, values]) => [key, stats(values)]));
}

// ---------------------------------------------------------------------------------------------
// Memory, each loader in a fresh process

interface ChildReport {
  ms: number;
  messages: number;
  bytesRead: number | null;
  rssBefore: number;
  heapBefore: number;
  heapAfterLoad: number;
  heapRetained: number;
  peakRss: number;
  /** Where peakRss comes from: VmHWM reset just before the load, or getrusage's maxRSS (process lifetime, and on Linux inherited from the parent at fork). */
  peakSource: "VmHWM" | "maxRSS";
}

type ChildResult = { ok: true; report: ChildReport } | { ok: false; error: string };

/** Runs in the child: imports the built modules only (no tsx), loads once, keeps the result, reports. */
const CHILD_SCRIPT = `
const { readFileSync, writeFileSync } = await import("node:fs");
const { kind, file, transcriptUrl, piUrl } = JSON.parse(process.env.TRANSCRIPT_BENCH_CHILD);
const mod = await import(kind === "pi" ? piUrl : transcriptUrl);
const hwm = () => Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]) * 1024;
globalThis.gc(); globalThis.gc();
let peakSource = "maxRSS";
try { writeFileSync("/proc/self/clear_refs", "5"); if (hwm() > 0) peakSource = "VmHWM"; } catch {}
const before = process.memoryUsage();
const start = performance.now();
let kept;
if (kind === "pi") { const manager = mod.SessionManager.open(file); kept = { manager, context: manager.buildSessionContext() }; }
else if (kind === "full") kept = { context: mod.buildContext(mod.readSession(file).entries) };
else kept = { context: mod.loadBoundary(file) };
const ms = performance.now() - start;
const peakRss = peakSource === "VmHWM" ? hwm() : process.resourceUsage().maxRSS * 1024;
const loaded = process.memoryUsage();
globalThis.gc(); globalThis.gc();
const after = process.memoryUsage();
process.stdout.write(JSON.stringify({
  ms, messages: kept.context.messages.length, bytesRead: kept.context.bytesRead ?? null,
  rssBefore: before.rss, heapBefore: before.heapUsed, heapAfterLoad: loaded.heapUsed,
  heapRetained: after.heapUsed - before.heapUsed,
  peakRss, peakSource,
}));
`;

/** Our session loaders (readSession, buildContext, loadBoundary). */
const TRANSCRIPT_URL = import.meta.resolve("@compaction/transcript");
/** pi's session module itself (what the package re-exports), so pi's child does not pay for its whole CLI's imports. */
const PI_URL = new URL("./core/session-manager.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href;

/** The loaders measured in child processes; loadBoundary last. pi's manager is kept, as pi keeps it for the session. */
const CHILD_LOADERS = [
  { kind: "pi", label: "pi SessionManager.open + build (manager kept)" },
  { kind: "full", label: "ours readSession + buildContext" },
  { kind: "boundary", label: "ours loadBoundary" },
] as const;

function runChild(kind: (typeof CHILD_LOADERS)[number]["kind"], file: string, heapMiB?: number): ChildResult {
  const env: NodeJS.ProcessEnv = { ...process.env, TRANSCRIPT_BENCH_CHILD: JSON.stringify({ kind, file, transcriptUrl: TRANSCRIPT_URL, piUrl: PI_URL }) };
  delete env["NODE_OPTIONS"];
  const flags = ["--expose-gc", ...(heapMiB === undefined ? [] : [`--max-old-space-size=${heapMiB}`])];
  const child = spawnSync(process.execPath, [...flags, "--input-type=module", "-e", CHILD_SCRIPT], { env, encoding: "utf8", maxBuffer: MIB });
  if (child.status === 0) return { ok: true, report: JSON.parse(child.stdout) as ChildReport };
  const outOfMemory = child.stderr.split("\n").find((l) => /heap|memory|Invalid string length/i.test(l));
  // Running out of memory (a message, or a kill by signal) is a result: pi's loader in a small
  // heap. Any other failure is the bench's own (a loader it cannot find), and must not pass as one.
  if (outOfMemory === undefined && child.signal === null) throw new BenchAbort(`the ${kind} loader's child process failed (${child.signal ?? `exit ${child.status}`}): ${child.stderr.trim().slice(0, 600)}`);
  return { ok: false, error: `${child.signal ?? `exit ${child.status}`}: ${outOfMemory?.trim().slice(0, 90) ?? "no message"}` };
}

// ---------------------------------------------------------------------------------------------
// Report

const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;
const ms = (value: number): string => `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ms`;

function table(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join("  ");
  console.log(`  ${line(header)}`);
  console.log(`  ${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const row of rows) console.log(`  ${line(row)}`);
}

const verdict = (met: boolean): string => (met ? "MET" : "NOT MET");

interface VariantOutcome {
  speedMet: boolean;
  memoryMet: boolean;
}

async function benchVariant(variant: Variant, dir: string, pools: Pools): Promise<VariantOutcome> {
  console.log(`\n=== ${variant.name} ===`);
  let started = performance.now();
  const session = await generateSession(join(dir, `${variant.settingsAfterBoundary ? "settings" : "worst"}.jsonl`), variant, pools, TARGET_BYTES);
  const size = statSync(session.path).size;
  const afterCompaction = size - session.compactionOffset;
  const boundaryPart = size - session.firstKeptOffset;
  console.log(`  file: ${mib(size)} (${size.toLocaleString("en")} bytes), ${session.entries.toLocaleString("en")} entries, ${session.turns.toLocaleString("en")} turns, ${session.compactions} compactions; written in ${ms(performance.now() - started)}`);
  console.log(`  part after the latest compaction: ${mib(afterCompaction)} (${((100 * afterCompaction) / size).toFixed(1)}% of the file); from its first kept entry: ${mib(boundaryPart)}`);

  checkSameContext(session);

  started = performance.now();
  const times = timeLoaders(session.path);
  const pi = times.get("pi") as Stats;
  console.log(`\n  Time to load (${SLOW_RUNS} runs each, loadBoundary ${FAST_RUNS}; in ${ms(performance.now() - started)})`);
  table(
    ["loader", "median", "min", "pi open / this (median)"],
    LOADERS.map((l) => {
      const t = times.get(l.key) as Stats;
      return [l.label, ms(t.median), ms(t.min), `${(pi.median / t.median).toFixed(1)}x`];
    }),
  );
  const boundaryTime = times.get("boundary") as Stats;
  const speedup = pi.median / boundaryTime.median;
  const speedupOnePass = (times.get("piParse") as Stats).median / boundaryTime.median;
  const speedMet = speedup >= SPEEDUP_TARGET;
  console.log(`  ${verdict(speedMet)}: loadBoundary ${speedup.toFixed(1)}x faster than pi open + build (target >= ${SPEEDUP_TARGET}x); ${speedupOnePass.toFixed(1)}x faster than pi's one-parse path`);

  const memoryMet = await measureMemory(session, variant, dir, pools);
  rmSync(session.path, { force: true });
  return { speedMet, memoryMet };
}

interface MemoryRow {
  label: string;
  size: number;
  normal: ChildResult;
  small?: ChildResult;
}

/** Memory of each loader in fresh processes, loadBoundary also on a smaller file with the same tail; returns whether the memory target is met. */
async function measureMemory(session: GeneratedSession, variant: Variant, dir: string, pools: Pools): Promise<boolean> {
  const started = performance.now();
  const size = statSync(session.path).size;
  const boundaryPart = size - session.firstKeptOffset;
  const rows: MemoryRow[] = CHILD_LOADERS.map(({ kind, label }) => ({
    label,
    size,
    normal: runChild(kind, session.path),
    small: runChild(kind, session.path, SMALL_HEAP_MIB),
  }));
  const boundary = rows[CHILD_LOADERS.length - 1] as Required<MemoryRow>;
  const smaller = await generateSession(join(dir, "smaller.jsonl"), variant, pools, SCALE_FRACTION * TARGET_BYTES);
  const smallerSize = statSync(smaller.path).size;
  const scaled: MemoryRow = { label: `ours loadBoundary, ${(SCALE_FRACTION * 100).toFixed(0)}% size file, same tail`, size: smallerSize, normal: runChild("boundary", smaller.path) };
  rmSync(smaller.path, { force: true });
  rows.push(scaled);

  console.log(`\n  Memory, one load in a fresh node process (result kept; in ${ms(performance.now() - started)})`);
  table(
    ["loader", "file", "RSS before", "peak RSS", "RSS growth", "heap before", "heap after load", "heap kept (after GC)", "bytes read", `${SMALL_HEAP_MIB} MiB heap`],
    rows.map(({ label, size: fileSize, normal, small }) => {
      const smallCell = small === undefined ? "-" : small.ok ? `ok (${ms(small.report.ms)})` : "FAILS";
      if (!normal.ok) return [label, mib(fileSize), "-", "-", "-", "-", "-", "-", "-", smallCell];
      const r = normal.report;
      const read = r.bytesRead === null ? "whole file" : `${mib(r.bytesRead)} (${((100 * r.bytesRead) / fileSize).toFixed(1)}%)`;
      const peak = `${mib(r.peakRss)}${r.peakSource === "VmHWM" ? "" : "*"}`;
      return [label, mib(fileSize), mib(r.rssBefore), peak, mib(r.peakRss - r.rssBefore), mib(r.heapBefore), mib(r.heapAfterLoad), mib(r.heapRetained), read, smallCell];
    }),
  );
  if (rows.some((r) => r.normal.ok && r.normal.report.peakSource !== "VmHWM")) {
    console.log("  * getrusage maxRSS: the process's lifetime peak (no /proc/self/clear_refs here), so it may include start-up or the parent's RSS");
  }
  for (const { label, normal, small } of rows) {
    if (!normal.ok) console.log(`  ${label}, default heap: ${normal.error}`);
    if (small !== undefined && !small.ok) console.log(`  ${label}, ${SMALL_HEAP_MIB} MiB heap: ${small.error}`);
  }
  if (!boundary.normal.ok) {
    console.log("  NOT MET: loadBoundary failed in its child process");
    return false;
  }
  const r = boundary.normal.report;
  const growth = r.peakRss - r.rssBefore;
  const heapLimit = MEMORY_FACTOR * boundaryPart + HEAP_ALLOWANCE;
  const rssLimit = MEMORY_FACTOR * boundaryPart + RSS_ALLOWANCE;
  const met = boundary.small.ok && r.heapRetained <= heapLimit && growth <= rssLimit;
  console.log(
    `  ${verdict(met)}: loadBoundary keeps ${mib(r.heapRetained)} of heap (limit ${MEMORY_FACTOR} x ${mib(boundaryPart)} boundary part + ${mib(HEAP_ALLOWANCE)} = ${mib(heapLimit)}), ` +
      `adds ${mib(growth)} RSS at peak (limit ${mib(rssLimit)}), loads in a ${SMALL_HEAP_MIB} MiB heap: ${boundary.small.ok ? "yes" : "no"}; the file is ${mib(size)}`,
  );
  if (scaled.normal.ok) {
    const s = scaled.normal.report;
    console.log(
      `  scaling: file ${mib(smallerSize)} -> ${mib(size)} (${(size / smallerSize).toFixed(1)}x): loadBoundary heap kept ${mib(s.heapRetained)} -> ${mib(r.heapRetained)}, ` +
        `RSS growth ${mib(s.peakRss - s.rssBefore)} -> ${mib(growth)}`,
    );
  }
  return met;
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`Transcript loading benchmark: node ${process.version}, target file ${mib(TARGET_BYTES)}`);
  const pools = harvestPools();
  const dir = mkdtempSync(join(tmpdir(), "transcript-bench-"));
  const outcomes: VariantOutcome[] = [];
  try {
    for (const variant of VARIANTS) outcomes.push(await benchVariant(variant, dir, pools));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nSummary (${ms(performance.now() - started)} in all)`);
  VARIANTS.forEach((variant, i) => {
    const outcome = outcomes[i] as VariantOutcome;
    console.log(`  ${variant.name}: speed ${verdict(outcome.speedMet)}, memory ${verdict(outcome.memoryMet)}`);
  });
}

try {
  await main();
} catch (error) {
  if (!(error instanceof BenchAbort)) throw error;
  console.error(`\nABORTED: ${error.message}`);
  process.exitCode = 1;
}
