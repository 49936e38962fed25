/**
 * Session stores benchmark: the SQLite store beside the pi file store on the same data.
 * Run: `cd test && npx tsx bench/session-stores.bench.ts`. Smaller runs while trying things
 * out: `SESSION_STORES_BENCH_MIB=10 SESSION_STORES_BENCH_MESSAGES=50000 SESSION_STORES_BENCH_APPENDS=100`.
 *
 * Rows (each for every store):
 * - **appends/s, 8 writers, one session**: 8 processes (real concurrency: node:sqlite is
 *   synchronous, so writers in one process would only take turns) each append single messages
 *   to the same session, each append its own transaction (SQLite) or locked write (pi file).
 *   Timed from a start signal after all have opened the session, so process start-up is not counted.
 * - **appends/s, 8 writers, 1,000 sessions**: the same 8 processes, each appending round robin
 *   to its own 125 of 1,000 sessions (one SQLite database file; 1,000 pi files).
 * - **open a 100 MB session's context**: a session of about 100 MB built from the real pi
 *   fixtures' messages (a compaction every 500 turns); a fresh store handle, `branch({fromBoundary:
 *   true})` and `buildContext` (median of 5; the first open of each store is shown too).
 * - **memory_search at 1M messages**: SQLite's `search()` (FTS5) against recall's own index over
 *   the same pi file (`openRecallIndex`: building it, then a query), median query latency over
 *   a set of real words and identifiers.
 *
 * Another store (Postgres) gets the same rows by passing its `BenchStore` to the exported
 * `measure*` functions; see `STORES` at the bottom.
 *
 * BENCH_DOCS=1 writes the table to docs/sessions-in-a-database.md on the full default run only
 * (none of the SESSION_STORES_BENCH_* variables set, and Postgres installed), BENCH_DOCS=print
 * prints it (see support/doc-tables.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { FIXTURES_DIR, PI_FIXTURES } from "@compaction/fixtures";
import { openRecallIndex } from "@compaction/plugin-recall";
import {
  buildContext,
  createPiFileStore,
  type EntryStore,
  type NewEntry,
  openPiFileStore,
  openSqliteStore,
  type SqliteStore,
} from "@compaction/transcript";
import { printTable } from "./print-table.js";
import { writeDocTables } from "./support/doc-tables.js";
import { postgresBenchStore } from "./support/postgres-bench-store.js";

const MIB = 1024 * 1024;
const TARGET_MIB = Number(process.env["SESSION_STORES_BENCH_MIB"] ?? 100);
const SEARCH_MESSAGES = Number(process.env["SESSION_STORES_BENCH_MESSAGES"] ?? 1_000_000);
const APPENDS_PER_WRITER = Number(process.env["SESSION_STORES_BENCH_APPENDS"] ?? 100);
const WRITERS = 8;
const SESSIONS = 1_000;
const TURNS_PER_COMPACTION = 500;
const OPEN_RUNS = 5;
const WRITER = fileURLToPath(new URL("./support/session-store-writer.mjs", import.meta.url));
/** The variables that narrow the run: with one set, the docs' table is not written. */
const NARROWING = ["SESSION_STORES_BENCH_MIB", "SESSION_STORES_BENCH_MESSAGES", "SESSION_STORES_BENCH_APPENDS", "SESSION_STORES_BENCH_STORES"];

/** A store under benchmark: how to make sessions, and how a writer process opens one. */
export interface BenchStore {
  readonly name: string;
  /** A new, empty session named `key` (unique within the run), in `dir`. */
  create(dir: string, key: string): Promise<EntryStore>;
  /** A fresh handle on the session of `store`. */
  reopen(store: EntryStore): Promise<EntryStore>;
  /** How a writer process opens the session of `store`: `(await import(module))[export](...args)`. */
  opener(store: EntryStore): { readonly module: string; readonly export: string; readonly args: readonly unknown[] };
  /** Bytes the store takes on disk for the sessions in `dir` (for the table). */
  size(dir: string, stores: readonly EntryStore[]): number | Promise<number>;
}

// ---------------------------------------------------------------------------------------------
// Real content: messages of the real pi fixtures, repeated

interface Content {
  /** Message entries of the fixtures (ids left for the store to assign), in order. */
  readonly messages: NewEntry[];
  /** Short versions (text cut to 160 characters), for the million-message session. */
  readonly short: NewEntry[];
  /** Words and identifiers that occur in them, to search for. */
  readonly queries: string[];
}

function harvest(): Content {
  const messages: NewEntry[] = [];
  const short: NewEntry[] = [];
  const texts: string[] = [];
  for (const file of PI_FIXTURES) {
    for (const line of readFileSync(join(FIXTURES_DIR, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry["type"] !== "message") continue;
      const message = entry["message"] as Record<string, unknown>;
      messages.push({ type: "message", message } as unknown as NewEntry);
      const blocks = Array.isArray(message["content"]) ? (message["content"] as Record<string, unknown>[]) : [];
      const text = typeof message["content"] === "string" ? message["content"] : blocks.map((b) => (typeof b["text"] === "string" ? b["text"] : "")).join(" ");
      if (text.trim() === "") continue;
      texts.push(text);
      short.push({ type: "message", message: { role: message["role"] === "user" ? "user" : "assistant", content: [{ type: "text", text: text.slice(0, 160) }], ...(message["role"] === "user" ? {} : { stopReason: "stop" }), timestamp: 1_767_225_600_000 } } as NewEntry);
    }
  }
  const words = texts.join(" ").match(/[A-Za-z][\w./-]{5,40}/g) ?? [];
  const identifiers = [...new Set(words.filter((w) => /[./_-]/.test(w)))].slice(0, 10);
  const plain = [...new Set(words.filter((w) => /^[a-z]+$/.test(w)))].slice(0, 10);
  return { messages, short, queries: [...identifiers, ...plain] };
}

// ---------------------------------------------------------------------------------------------
// Measures (exported: a Postgres row passes its own BenchStore)

interface WriterProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly closed: Promise<number | null>;
  stderr: string;
}

function startWriter(spec: Record<string, unknown>): WriterProcess {
  const child = spawn(process.execPath, [WRITER, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "pipe"] });
  const writer: WriterProcess = { child, lines: [], stderr: "", closed: new Promise((resolve) => child.on("close", resolve)) };
  child.stdout?.on("data", (chunk: Buffer) => writer.lines.push(...chunk.toString("utf8").split("\n").filter((l) => l !== "")));
  child.stderr?.on("data", (chunk: Buffer) => (writer.stderr += chunk.toString("utf8")));
  return writer;
}

/**
 * Appends per second by `WRITERS` processes at once, each `appendsPerWriter` single-message
 * appends, over `sessions` sessions (writer w appends round robin to sessions w, w+8, ...).
 * Checks that every append arrived.
 */
export async function measureConcurrentAppends(store: BenchStore, dir: string, sessions: number, appendsPerWriter: number): Promise<{ perSecond: number; ms: number }> {
  const stores: EntryStore[] = [];
  for (let i = 0; i < sessions; i++) stores.push(await store.create(dir, `w${sessions}-${i}`));
  const go = join(dir, `go-${sessions}`);
  const writers = Array.from({ length: WRITERS }, (_, w) => {
    const mine = sessions === 1 ? stores : stores.filter((_, i) => i % WRITERS === w);
    const openers = mine.map((s) => store.opener(s));
    const first = openers[0] as { module: string; export: string };
    return startWriter({ module: first.module, export: first.export, args: openers.map((o) => o.args), appends: appendsPerWriter, go, name: `writer${w}` });
  });
  const deadline = Date.now() + 120_000;
  while (!writers.every((w) => w.lines.includes("ready"))) {
    if (Date.now() > deadline || writers.some((w) => w.child.exitCode !== null)) throw new Error(`writers did not start: ${writers.map((w) => w.stderr).join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const start = performance.now();
  writeFileSync(go, "");
  const codes = await Promise.all(writers.map((w) => w.closed));
  const ms = performance.now() - start;
  if (codes.some((code) => code !== 0)) throw new Error(`a writer failed: ${writers.map((w) => w.stderr).join("\n")}`);
  let total = 0;
  for (const s of stores) total += (await s.entries()).length;
  if (total !== WRITERS * appendsPerWriter) throw new Error(`${store.name}: expected ${WRITERS * appendsPerWriter} entries, found ${total}`);
  for (const s of stores) await s.close();
  return { perSecond: (WRITERS * appendsPerWriter) / (ms / 1000), ms };
}

/** Fills a session with `content` repeated until it holds about `targetBytes` of entry JSON, a compaction every 500 turns. */
export async function fillSession(target: EntryStore, content: readonly NewEntry[], targetBytes: number, batchSize = 5_000): Promise<{ entries: number; bytes: number }> {
  let bytes = 0;
  let entries = 0;
  let turns = 0;
  let batch: NewEntry[] = [];
  let newest: string | null = null;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await target.append(batch);
    batch = [];
  };
  for (let i = 0; bytes < targetBytes; i++) {
    const entry = content[i % content.length] as NewEntry;
    batch.push(entry);
    bytes += JSON.stringify(entry).length + 60;
    entries += 1;
    if ((entry as { message?: { role?: string } }).message?.role === "user") turns += 1;
    if (turns === TURNS_PER_COMPACTION) {
      turns = 0;
      await flush();
      const branch = await target.branch({ fromBoundary: true });
      const kept = branch.entries[branch.entries.length - 6] ?? branch.entries[0];
      const write = await target.appendCompaction(
        { summary: `Summary of the work so far (${entries} entries).`, firstKeptEntryId: kept?.id as string, tokensBefore: 100_000, details: {} as never },
        { newestCompactionId: newest },
      );
      if (write.written) newest = write.entry.id;
      entries += 1;
    } else if (batch.length >= batchSize) {
      await flush();
    }
  }
  await flush();
  return { entries, bytes };
}

/** Opening the session's context: a fresh handle, the branch from the boundary, buildContext. Median of OPEN_RUNS, and the first. */
export async function measureOpenContext(store: BenchStore, session: EntryStore): Promise<{ firstMs: number; medianMs: number; messages: number }> {
  const times: number[] = [];
  let messages = 0;
  for (let run = 0; run < OPEN_RUNS; run++) {
    const start = performance.now();
    const handle = await store.reopen(session);
    const branch = await handle.branch({ fromBoundary: true });
    messages = buildContext(branch.entries).messages.length;
    times.push(performance.now() - start);
    await handle.close();
  }
  return { firstMs: times[0] as number, medianMs: median(times), messages };
}

/** Median latency of `search(query)` over `queries`, after one warm-up query. */
export async function measureSearch(search: (query: string) => Promise<number>, queries: readonly string[]): Promise<{ medianMs: number; hits: number }> {
  await search(queries[0] as string);
  const times: number[] = [];
  let hits = 0;
  for (const query of queries) {
    const start = performance.now();
    hits += await search(query);
    times.push(performance.now() - start);
  }
  return { medianMs: median(times), hits };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

// ---------------------------------------------------------------------------------------------
// The stores

const sqliteFile = (dir: string) => join(dir, "sessions.sqlite");

export const SQLITE_BENCH_STORE: BenchStore = {
  name: "SQLite",
  create: (dir, key) => openSqliteStore({ file: sqliteFile(dir), session: key, create: { cwd: "/bench" } }),
  reopen: (store) => openSqliteStore({ file: (store as SqliteStore).file, session: (store as SqliteStore).sessionId }),
  opener: (store) => ({ module: "@compaction/transcript", export: "openSqliteStore", args: [{ file: (store as SqliteStore).file, session: (store as SqliteStore).sessionId, busyTimeoutMs: 120_000 }] }),
  size: (dir) => ["", "-wal"].reduce((sum, suffix) => sum + fileSize(sqliteFile(dir) + suffix), 0),
};

export const PI_FILE_BENCH_STORE: BenchStore = {
  name: "pi file",
  create: (dir, key) => createPiFileStore(join(dir, `${key}.jsonl`), { cwd: "/bench" }),
  reopen: (store) => openPiFileStore(store.location),
  opener: (store) => ({ module: "@compaction/transcript", export: "openPiFileStore", args: [store.location, { lock: { timeoutMs: 120_000 } }] }),
  size: (_dir, stores) => stores.reduce((sum, store) => sum + fileSize(store.location), 0),
};

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * The stores compared: SQLite, the pi file, and Postgres on a server started for the run when its
 * binaries are installed (`node scripts/host-install.mjs postgres`). `SESSION_STORES_BENCH_STORES`
 * (names, comma-separated, e.g. `Postgres`) runs some of them only.
 */
let STORES: readonly BenchStore[] = [SQLITE_BENCH_STORE, PI_FILE_BENCH_STORE];

async function main(): Promise<void> {
  const began = performance.now();
  const postgres = await postgresBenchStore();
  if ("missing" in postgres) console.log(`  No Postgres row: ${postgres.missing}.`);
  else STORES = [...STORES, postgres];
  const only = process.env["SESSION_STORES_BENCH_STORES"]?.split(",").map((name) => name.trim().toLowerCase());
  if (only !== undefined) STORES = STORES.filter((store) => only.some((name) => store.name.toLowerCase().startsWith(name)));
  let page: string[][];
  try {
    page = await compare();
  } finally {
    if (!("missing" in postgres)) await postgres.stop();
  }
  const missing = "missing" in postgres ? `the Postgres column (${postgres.missing})` : undefined;
  writeDocTables(import.meta.url, NARROWING, [{ page: "docs/sessions-in-a-database.md", name: "session-stores", rows: page }], missing);
  console.log(`  Total run time: ${(performance.now() - began) / 1000 | 0} s.`);
}

/** Measures every store, prints the table, and returns the page's version of it (rows[0] the header). */
async function compare(): Promise<string[][]> {
  const content = harvest();
  const rows: string[][] = [["measure", ...STORES.map((s) => s.name)]];
  const notes: string[] = [];
  const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

  const appendRows: Record<string, string[]> = { one: ["appends/s, 8 writers, 1 session"], many: [`appends/s, 8 writers, ${fmt(SESSIONS)} sessions`] };
  for (const store of STORES) {
    for (const [key, sessions] of [["one", 1], ["many", SESSIONS]] as const) {
      const dir = mkdtempSync(join(tmpdir(), "bench-stores-"));
      try {
        const { perSecond } = await measureConcurrentAppends(store, dir, sessions, APPENDS_PER_WRITER);
        appendRows[key]?.push(fmt(perSecond));
        console.error(`  ${store.name}: ${fmt(perSecond)} appends/s over ${sessions} session(s)`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  rows.push(appendRows["one"] as string[], appendRows["many"] as string[]);

  const openFirst = [`open a ${TARGET_MIB} MB session's context, first (ms)`];
  const openMedian = [`open a ${TARGET_MIB} MB session's context, median (ms)`];
  const onDisk = [`  ${TARGET_MIB} MB session on disk (MB)`];
  const fillTimes: string[] = [];
  for (const store of STORES) {
    const dir = mkdtempSync(join(tmpdir(), "bench-stores-"));
    try {
      const session = await store.create(dir, "big");
      const fillStart = performance.now();
      const filled = await fillSession(session, content.messages, TARGET_MIB * MIB);
      fillTimes.push(`${store.name} ${fmt((performance.now() - fillStart) / 1000, 1)} s for ${fmt(filled.entries)} entries`);
      const open = await measureOpenContext(store, session);
      openFirst.push(fmt(open.firstMs, 1));
      openMedian.push(fmt(open.medianMs, 1));
      console.error(`  ${store.name}: ${TARGET_MIB} MB context opened in ${fmt(open.medianMs, 1)} ms (median), ${open.messages} messages`);
      onDisk.push(fmt((await store.size(dir, [session])) / MIB, 1));
      await session.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  rows.push(openFirst, openMedian, onDisk);
  notes.push(`Building the ${TARGET_MIB} MB sessions: ${fillTimes.join("; ")}.`);

  // memory_search at SEARCH_MESSAGES messages: SQLite's FTS5 search() beside recall's index over the same messages in a pi file.
  const searchRow = [`memory_search at ${fmt(SEARCH_MESSAGES)} messages, median (ms)`];
  const searchPage = [`\`memory_search\` at ${SEARCH_MESSAGES >= 1_000_000 && SEARCH_MESSAGES % 1_000_000 === 0 ? `${SEARCH_MESSAGES / 1_000_000}M` : fmt(SEARCH_MESSAGES)} messages, median`];
  const buildRow = [`  index build (s)`];
  for (const store of STORES) {
    const dir = mkdtempSync(join(tmpdir(), "bench-stores-"));
    try {
      const session = await store.create(dir, "million");
      const fillStart = performance.now();
      let written = 0;
      for (let i = 0; written < SEARCH_MESSAGES; i++) {
        const size = Math.min(20_000, SEARCH_MESSAGES - written);
        await session.append(Array.from({ length: size }, (_, j) => content.short[(written + j) % content.short.length] as NewEntry));
        written += size;
      }
      const fillSeconds = (performance.now() - fillStart) / 1000;
      console.error(`  ${store.name}: ${fmt(SEARCH_MESSAGES)} messages written in ${fmt(fillSeconds, 1)} s`);
      if (session.search !== undefined) {
        const search = session.search.bind(session);
        const result = await measureSearch(async (query) => (await search(query, { limit: 5 })).length, content.queries);
        searchRow.push(fmt(result.medianMs, 1));
        searchPage.push(`${fmt(result.medianMs, 1)} ms`);
        buildRow.push(`— (written with the entries)`);
        notes.push(`${store.name}: ${fmt(SEARCH_MESSAGES)} messages written in ${fmt(fillSeconds, 1)} s (batches of 20,000, one transaction each), ${fmt((await store.size(dir, [session])) / MIB)} MB.`);
      } else {
        const buildStart = performance.now();
        const index = await openRecallIndex(session.location, { autoUpdate: false });
        const buildSeconds = (performance.now() - buildStart) / 1000;
        const result = await measureSearch(async (query) => (await index.search(query, { limit: 5 })).length, content.queries);
        searchRow.push(fmt(result.medianMs, 1));
        searchPage.push(`${fmt(result.medianMs, 1)} ms (recall's index: ${fmt(buildSeconds)} s to build)`);
        buildRow.push(fmt(buildSeconds, 1));
        notes.push(`${store.name}: ${fmt(SEARCH_MESSAGES)} messages written in ${fmt(fillSeconds, 1)} s, ${fmt((await store.size(dir, [session])) / MIB)} MB; recall's index built in ${fmt(buildSeconds, 1)} s.`);
      }
      await session.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  rows.push(searchRow, buildRow);

  printTable(`Session stores (${WRITERS} writer processes x ${APPENDS_PER_WRITER} appends; queries: ${content.queries.length} real words and identifiers)`, rows);
  for (const note of notes) console.log(`  ${note}`);
  return [
    ["measure", ...STORES.map((s) => s.name)],
    [`appends/s, ${WRITERS} writers, one session`, ...(appendRows["one"] ?? []).slice(1)],
    [`appends/s, ${WRITERS} writers, ${fmt(SESSIONS)} sessions`, ...(appendRows["many"] ?? []).slice(1)],
    [`open a ${TARGET_MIB} MB session's context, median`, ...openMedian.slice(1).map((cell) => `${cell} ms`)],
    searchPage,
  ];
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
