/**
 * Compaction speed. Run: `cd test && npx tsx bench/compaction-speed.bench.ts`.
 *
 * On the shipped pi session (examples/sessions/pi-large-session.jsonl, 914 messages) and on a
 * context of at least 200,000 o200k tokens (that session followed by the other recorded pi
 * session's messages), with no model, it prints side by side:
 *  a. per built-in preset, `compact()` warm (the same message objects again: what a host that keeps
 *     its messages sees on the next turn; target under 50 ms) and cold on fresh message objects:
 *     "new request" (the same compactor, as an AI SDK or LangChain app's next request: counts are
 *     kept by text) and "new compactor" (one that has counted nothing: a new process, once the
 *     encoder has started), against raw tiktoken `encode_ordinary` of the same text (the text our
 *     counter counts, joined), run alternately; target: cold within 1.2x of raw (the median of the
 *     ratios of each cold run to the raw run right after it: the machine's speed moves by more
 *     than the target's margin from one minute to the next, and both runs of a pair share it). Beside it, the
 *     same text encoded one call per message (what any exact count of every message costs: the
 *     floor of a compactor that counts them all), so what the compaction adds shows apart;
 *  b. creating a compactor: the first in the process (starts nothing: the encoder starts on the
 *     first count) and the first count (the o200k encoder's start);
 *  c. pi's own no-model preparation of the same branch (`prepareCompaction`), the peer;
 *  d. the CLI, as a user runs it: `context status` and `compact --dry-run` on the shipped session,
 *     wall time of whole processes (target: well under a second, i.e. under 0.6 s). The dry run
 *     six ways: the very first after an install (the CLI's cache folder emptied, then the
 *     encoder's image saved by scripts/prepare-encoder.mjs, as this repository's prepare does), the very first
 *     with install scripts turned off (nothing kept: the encoder is built and its image saved),
 *     the first on the session (its counts emptied, the encoder started from its image), the first
 *     on a fork of the session (pi's /fork: its header names the session, whose counts were kept),
 *     again (every count kept by the run before: the encoder does not start), and after two new
 *     turns (the counts kept before they were appended: the encoder starts, from its image, for them);
 *  e. exact o200k libraries: tiktoken (ours, built and started from its image), gpt-tokenizer and
 *     js-tiktoken, each started in a new process: start-up, time to count the shipped session's
 *     text, and whether the count is identical.
 *
 * BENCH_DOCS=1 writes a.'s table of the 200k-token context to docs/numbers.md, BENCH_DOCS=print
 * prints it (see support/doc-tables.ts). The run has no narrowing variables: it is always the full one.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { type Compactor, createCompactor, createPiAdapter, messageTokenText, type EncoderImageStore, type PiMessage, startEncoderWithImage } from "@compaction/core";
import { loadBoundary, readSession, SessionTree } from "@compaction/transcript";
import { PI_FIXTURES, loadPiMessages } from "@compaction/fixtures";
import { printTable } from "./print-table.js";
import { writeDocTables } from "./support/doc-tables.js";

// pi's compaction module, from its compiled file: the package's `exports` do not publish prepareCompaction.
const pi = (await import(new URL("./core/compaction/compaction.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href)) as {
  prepareCompaction(entries: unknown[], settings: unknown): unknown;
  DEFAULT_COMPACTION_SETTINGS: unknown;
};

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SHIPPED = join(ROOT, "examples/sessions/pi-large-session.jsonl");
const CLI = join(ROOT, "cli/bin/compaction.js");
const PREPARE_ENCODER = join(ROOT, "scripts/prepare-encoder.mjs");
const PRESETS = ["safeguard", "layered", "sliding-window", "rolling"] as const;
const WINDOW = 200_000;
const WARM_TARGET_MS = 50;
const COLD_TARGET = 1.2;
const CLI_TARGET_S = 0.6;
const RUNS = { warm: 15, cold: 15, cli: 7 };

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
};
const ms = (value: number): string => `${value.toFixed(1)} ms`;
const verdict = (met: boolean): string => (met ? "MET" : "NOT MET");


function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

// ---------------------------------------------------------------------------------------------
// The contexts

const adapter = createPiAdapter();
// Raw tiktoken from the very module instance our counter loads (core requires tiktoken's CommonJS
// build): an `import "tiktoken"` here would load a second WASM instance, whose speed differs from
// the first's by up to 15% from one process to the next, and the ratio would measure that.
const tiktoken = createRequire(import.meta.resolve("@compaction/core"))("tiktoken") as typeof import("tiktoken");
const raw = tiktoken.get_encoding("o200k_base");
const messageTexts = (messages: readonly unknown[]): string[] => messages.map((message) => messageTokenText(adapter.readFacts(message as PiMessage)));
const joinedText = (messages: readonly unknown[]): string => messageTexts(messages).join("\n");

const shipped = loadBoundary(SHIPPED).messages as unknown[];
const big = [...shipped];
const more = loadPiMessages(PI_FIXTURES.find((file) => !file.includes("large")) ?? PI_FIXTURES[0]!, { context: true }) as unknown[];
for (const message of more) {
  if (raw.encode_ordinary(joinedText(big)).length >= WINDOW) break;
  big.push(message);
}
const CONTEXTS = [
  { name: "shipped session", messages: shipped },
  { name: "200k-token context", messages: big },
] as const;

console.log(`Compaction speed (node ${process.version}); no model (extractive summaries), tiktoken o200k_base`);
for (const { name, messages } of CONTEXTS) {
  console.log(`  ${name}: ${messages.length} messages, ${raw.encode_ordinary(joinedText(messages)).length.toLocaleString("en-US")} o200k tokens of message text`);
}

// ---------------------------------------------------------------------------------------------
// b. creating a compactor, and the encoder's start

const project = mkdtempSync(join(tmpdir(), "compaction-speed-"));
const created: Compactor<unknown>[] = [];
const createMs = await timeAsync(async () => created.push(await createCompactor<unknown>({ cwd: project, adapter: "pi", preset: "safeguard" })));
const firstCountMs = time(() => created[0]!.tokens.count(structuredClone(shipped[0])));
const secondCreateMs = await timeAsync(async () => created.push(await createCompactor<unknown>({ cwd: project, adapter: "pi", preset: "layered" })));
printTable("b. creating a compactor (tiktoken counter)", [
  ["step", "time"],
  ["first createCompactor in the process (config, plugins; no encoder yet)", ms(createMs)],
  ["its first count (starts the o200k encoder, once per process)", ms(firstCountMs)],
  ["another createCompactor (shares the encoder)", ms(secondCreateMs)],
]);

// ---------------------------------------------------------------------------------------------
// a. warm and cold compaction per preset against raw tiktoken

// docs/numbers.md's table: a. on the 200k-token context.
const speedPage: string[][] = [
  [
    "preset (200k-token context)",
    `warm (same messages again; target < ${WARM_TARGET_MS} ms)`,
    "new request (same messages as new objects)",
    "new compactor (nothing counted yet)",
    "raw tiktoken of the same text",
    "one call per message (÷ raw)",
    `new compactor ÷ raw (target ≤ ${COLD_TARGET}x)`,
  ],
];
for (const { name, messages } of CONTEXTS) {
  const text = joinedText(messages);
  const texts = messageTexts(messages);
  const rows: string[][] = [
    ["preset", "status", "warm", `< ${WARM_TARGET_MS} ms`, "new request", "new compactor", "raw tiktoken", "per-message encode", "new compactor / raw", `<= ${COLD_TARGET}x`],
  ];
  for (const preset of PRESETS) {
    const make = () => createCompactor<unknown>({ cwd: project, adapter: "pi", preset });
    const compactor = await make();
    created.push(compactor);
    const input = { contextWindow: WINDOW, trigger: "auto" as const };
    const first = await compactor.compact({ ...input, messages });
    const warm: number[] = [];
    for (let i = 0; i < RUNS.warm; i++) warm.push(await timeAsync(() => compactor.compact({ ...input, messages })));
    // Cold, each run on its own fresh copies of the messages (made before timing), alternating with
    // raw tiktoken: "new request" on the same compactor (it keeps counts by text), "new compactor"
    // on one that has counted nothing (a new process, once the encoder has started).
    const request: number[] = [];
    const fresh: number[] = [];
    const rawTimes: number[] = [];
    const perMessage: number[] = [];
    for (let i = 0; i < RUNS.cold + 1; i++) {
      const copies = [structuredClone(messages), structuredClone(messages)];
      const newCompactor = await make();
      const r1 = await timeAsync(() => compactor.compact({ ...input, messages: copies[0]! }));
      const c = await timeAsync(() => newCompactor.compact({ ...input, messages: copies[1]! }));
      const r = time(() => raw.encode_ordinary(text).length);
      const m = time(() => texts.reduce((sum, one) => sum + (one === "" ? 0 : raw.encode_ordinary(one).length), 0));
      newCompactor.dispose();
      if (i === 0) continue; // warm-up
      request.push(r1);
      fresh.push(c);
      rawTimes.push(r);
      perMessage.push(m);
    }
    const ratio = median(fresh.map((one, i) => one / (rawTimes[i] as number)));
    const perMessageCell = `${ms(median(perMessage))} (${median(perMessage.map((one, i) => one / (rawTimes[i] as number))).toFixed(2)}x)`;
    if (name === "200k-token context") speedPage.push([preset, ms(median(warm)), ms(median(request)), ms(median(fresh)), ms(median(rawTimes)), perMessageCell, `${ratio.toFixed(2)}x`]);
    rows.push([
      preset,
      first.status,
      ms(median(warm)),
      verdict(median(warm) < WARM_TARGET_MS),
      ms(median(request)),
      ms(median(fresh)),
      ms(median(rawTimes)),
      perMessageCell,
      `${ratio.toFixed(2)}x`,
      verdict(ratio <= COLD_TARGET),
    ]);
  }
  printTable(`a. compact() on the ${name} (${messages.length} messages; medians of ${RUNS.warm} warm runs and of ${RUNS.cold} cold runs alternating with raw tiktoken; the ratio is the median of each pair's)`, rows);
}

// ---------------------------------------------------------------------------------------------
// c. pi's own no-model preparation of the same branch

{
  const parsed = readSession(SHIPPED);
  const branch = new SessionTree(parsed.entries).branch();
  const prepare = () => pi.prepareCompaction(branch, pi.DEFAULT_COMPACTION_SETTINGS);
  if (prepare() === undefined) throw new Error("pi's prepareCompaction found nothing to compact on the shipped session");
  const times = Array.from({ length: RUNS.warm }, () => time(prepare));
  printTable("c. the peer: pi-coding-agent's prepareCompaction on the same branch (cut point and messages to summarise, no model)", [
    ["step", "median"],
    [`prepareCompaction (${branch.length} entries)`, ms(median(times))],
  ]);
}

// ---------------------------------------------------------------------------------------------
// d. the CLI as a user runs it

{
  // The CLI's count cache goes here, not in the user's ~/.cache.
  const cacheHome = mkdtempSync(join(tmpdir(), "compaction-bench-cache-"));
  const env = { ...process.env, XDG_CACHE_HOME: cacheHome };
  const emptyCache = (): void => rmSync(join(cacheHome, "compaction"), { recursive: true, force: true });
  const emptyCounts = (): void => rmSync(join(cacheHome, "compaction", "counts"), { recursive: true, force: true });
  // A copy of the shipped session that two new turns are appended to (lines in its own format).
  const grown = join(cacheHome, "grown-session.jsonl");
  const shippedText = readFileSync(SHIPPED, "utf8");
  const newTurns = (run: number): string =>
    ["the changelog", "the release notes"]
      .flatMap((topic, turn) => {
        const timestamp = new Date(Date.UTC(2025, 10, 21, 3, run, turn)).toISOString();
        const text = `Turn ${run}.${turn}: update ${topic} for the new commands.\n${"- one more line of what changed, and why\n".repeat(200)}`;
        return [
          { type: "message", timestamp, message: { role: "user", content: [{ type: "text", text: `Please update ${topic} (${run}.${turn}).` }], timestamp: Date.parse(timestamp) } },
          { type: "message", timestamp, message: { role: "assistant", content: [{ type: "text", text }], timestamp: Date.parse(timestamp) } },
        ];
      })
      .map((entry) => `${JSON.stringify(entry)}\n`)
      .join("");

  // A fork of the shipped session, as pi's /fork writes one: a new header naming it, then its entries.
  const fork = join(cacheHome, "forked-session.jsonl");
  const [shippedHeader, ...shippedEntries] = shippedText.split("\n");
  const forkText = [JSON.stringify({ ...JSON.parse(shippedHeader as string), id: "forked-session", parentSession: SHIPPED }), ...shippedEntries].join("\n");

  const commands: Array<{ label: string; args: string[]; before?: (run: number) => void }> = [
    { label: "compaction context status", args: ["context", "status", "--session", SHIPPED] },
    {
      label: "compaction compact --dry-run, the very first after an install (its encoder image only)",
      args: ["compact", "--dry-run", "--session", SHIPPED],
      before: () => {
        emptyCache();
        const prepared = spawnSync(process.execPath, [PREPARE_ENCODER], { cwd: project, encoding: "utf8", env });
        if (prepared.status !== 0 || prepared.stderr !== "") throw new Error(`scripts/prepare-encoder.mjs exited ${prepared.status}: ${prepared.stderr}`);
      },
    },
    { label: "compaction compact --dry-run, the very first, install scripts off (nothing kept)", args: ["compact", "--dry-run", "--session", SHIPPED], before: emptyCache },
    { label: "compaction compact --dry-run, first on the session (no counts kept)", args: ["compact", "--dry-run", "--session", SHIPPED], before: emptyCounts },
    {
      label: "compaction compact --dry-run, first on a fork of the session (the session's counts kept)",
      args: ["compact", "--dry-run", "--session", fork],
      before: () => {
        emptyCounts();
        cli(["compact", "--dry-run", "--session", SHIPPED], "keeping the session's counts before its fork");
        writeFileSync(fork, forkText);
      },
    },
    { label: "compaction compact --dry-run, again (counts kept)", args: ["compact", "--dry-run", "--session", SHIPPED] },
    {
      label: "compaction compact --dry-run, after 2 new turns",
      args: ["compact", "--dry-run", "--session", grown],
      before: (run) => {
        writeFileSync(grown, shippedText);
        cli(["compact", "--dry-run", "--session", grown], "keeping the counts before the new turns");
        writeFileSync(grown, shippedText + newTurns(run));
      },
    },
    { label: "compaction config (no count at all)", args: ["config"] },
  ];
  function cli(args: string[], label: string): void {
    const run = spawnSync(process.execPath, [CLI, ...args], { cwd: project, encoding: "utf8", env });
    if (run.status !== 0) throw new Error(`${label} exited ${run.status}: ${run.stderr}`);
  }
  const rows: string[][] = [["command (shipped session)", "wall median", "min", `< ${CLI_TARGET_S} s`]];
  try {
    for (const { label, args, before } of commands) {
      const times: number[] = [];
      for (let i = 0; i < RUNS.cli + 1; i++) {
        before?.(i);
        const start = process.hrtime.bigint();
        cli(args, label);
        const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
        if (i > 0) times.push(elapsed);
      }
      rows.push([label, `${median(times).toFixed(2)} s`, `${Math.min(...times).toFixed(2)} s`, verdict(median(times) < CLI_TARGET_S)]);
    }
  } finally {
    rmSync(cacheHome, { recursive: true, force: true });
  }
  const bare = Array.from({ length: RUNS.cli }, () => {
    const start = process.hrtime.bigint();
    execFileSync(process.execPath, ["-e", ""]);
    return Number(process.hrtime.bigint() - start) / 1e9;
  });
  rows.push(["(node -e '' : a process that does nothing)", `${median(bare).toFixed(2)} s`, `${Math.min(...bare).toFixed(2)} s`, ""]);
  printTable(`d. the CLI, whole processes (${RUNS.cli} runs after a warm-up)`, rows);
}

// ---------------------------------------------------------------------------------------------
// e. exact o200k libraries, each in a new process

{
  const text = joinedText(shipped);
  const dir = mkdtempSync(join(tmpdir(), "compaction-o200k-"));
  const textFile = join(dir, "text.txt");
  writeFileSync(textFile, text);
  // The image the row "started from its image" starts from: a file per key in `dir`, as the CLI
  // keeps them, saved here first.
  const imageStore = (folder: string): EncoderImageStore => ({
    read: (key) => readFileSync(join(folder, key)),
    write: (key, image) => writeFileSync(join(folder, key), image),
  });
  startEncoderWithImage("o200k_base", imageStore(dir)).encoder.free();
  const libraries: Array<[string, string, string?]> = [
    ["tiktoken (WASM; ours), built", `const { get_encoding } = await import("tiktoken"); const e = get_encoding("o200k_base"); count = (s) => e.encode_ordinary(s).length;`],
    [
      "tiktoken (WASM; ours), started from its image",
      `const started = startEncoderWithImage("o200k_base", { read: (key) => readFileSync(${JSON.stringify(dir)} + "/" + key), write() {}, onNote: (note) => { throw new Error(note); } });
       if (started.source !== "image") throw new Error("the encoder was not started from its image");
       const e = started.encoder; count = (s) => e.encode_ordinary(s).length;`,
      // Loaded before the clock starts: the core's other modules are no part of the encoder's start.
      `const { startEncoderWithImage } = await import("@compaction/core");`,
    ],
    ["gpt-tokenizer (pure JS)", `const m = await import("gpt-tokenizer/encoding/o200k_base"); count = (s) => m.countTokens(s);`],
    ["js-tiktoken (pure JS)", `const { getEncoding } = await import("js-tiktoken"); const e = getEncoding("o200k_base"); count = (s) => e.encode(s, [], []).length;`],
  ];
  const rows: string[][] = [["library", "start (import + o200k)", "count the text (median of 5)", "tokens", "same count as tiktoken"]];
  let reference: number | undefined;
  for (const [label, setup, preload = ""] of libraries) {
    const script = `
      import { readFileSync } from "node:fs";
      const text = readFileSync(${JSON.stringify(textFile)}, "utf8");
      let count;
      ${preload}
      const t0 = performance.now();
      ${setup}
      count("warm");
      const start = performance.now() - t0;
      const times = []; let tokens = 0;
      for (let i = 0; i < 6; i++) { const t = performance.now(); tokens = count(text); if (i > 0) times.push(performance.now() - t); }
      times.sort((a, b) => a - b);
      console.log(JSON.stringify({ start, count: times[2], tokens }));`;
    const out = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: fileURLToPath(new URL("../", import.meta.url)), encoding: "utf8" })) as {
      start: number;
      count: number;
      tokens: number;
    };
    reference ??= out.tokens;
    rows.push([label, ms(out.start), ms(out.count), out.tokens.toLocaleString("en-US"), out.tokens === reference ? "yes" : "NO"]);
  }
  printTable(`e. exact o200k libraries on the shipped session's message text (${text.length.toLocaleString("en-US")} characters), each in a new process`, rows);
  rmSync(dir, { recursive: true, force: true });
}

for (const compactor of created) compactor.dispose();
raw.free();
rmSync(project, { recursive: true, force: true });
writeDocTables(import.meta.url, [], [{ page: "docs/numbers.md", name: "numbers-compaction-speed", rows: speedPage }]);
