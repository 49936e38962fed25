/** `compaction search "<query>"`: the session's entries that match, compacted ones too, best first, from its recall index. */
import { statSync } from "node:fs";
import { basename } from "node:path";
import {
  indexPathFor,
  openRecallIndex,
  openStoreRecallIndex,
  RECALL_DEFAULTS,
  type RecallHit,
  type RecallOptions,
  recallSettings,
} from "@compaction/plugin-recall";
import { type CommandContext, countOption } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { type DatabaseSession, openDatabaseStore } from "../database-target.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { progressLine } from "../progress.js";
import { branchBreak } from "../session-target.js";

/** Index builds of smaller files take well under a second: no progress line for them. */
const INDEX_PROGRESS_MIN_BYTES = 512 * 1024;

interface SearchOptions extends CommonOptions {
  readonly limit?: string;
}

/** The query, and `--limit` as a number (undefined: the recall plugin's limit). */
interface SearchInput {
  readonly query: string;
  readonly limit: number | undefined;
}

/** Everything `search` reports; `--json` prints it as is. */
export interface SearchReport {
  readonly session: { readonly path: string; readonly id: string | null };
  readonly query: string;
  /** The entry the searched branch ends at (the session's last entry). */
  readonly leafId: string | null;
  readonly index: { readonly path: string; readonly rebuilt: boolean; readonly reason: string | null; readonly entries: number };
  readonly results: readonly RecallHit[];
}

/** `compaction search "<query>"`. */
export const searchCommand = defineCommand({
  name: "search",
  description: "search every entry of the session, compacted and evicted ones too (full text, current branch)",
  arguments: [["<query>", "words to look for: names of files, functions, commands, errors"]],
  session: true,
  agent: true,
  options: [["-n, --limit <n>", "show at most this many results (default: the recall plugin's limit, 5)"]],
  parse: ({ args: [query], options }: CommandCall<[string], SearchOptions>): SearchInput => {
    if (query.trim() === "") throw new CliError(ExitCode.USAGE, "The query is empty.", 'Pass the words to look for: compaction search "failing test".');
    return { query, limit: countOption(options.limit, "--limit", "Pass e.g. --limit 10, or leave it out for the default.") };
  },
  run: search,
  text: (report, { context }) => renderReport(report, context),
});

async function search(scope: CommandScope<SearchOptions, SearchInput>): Promise<SearchReport> {
  const { context, session, input } = scope;
  const { path } = session;
  session.requirePiFormat("search it");
  // The index passes over lines that are not entries, as pi does; a corrupt line can break the
  // branch's parent chain and leave every entry before it out of the results. Like every other
  // command: exit 3 naming the line, unless --skip-corrupt (then each line, and what the break
  // leaves out, is reported on stderr).
  const parsed = session.entries();
  const broken = branchBreak(parsed);
  if (broken !== null) {
    context.io.stderr.write(
      `compaction: warning: the current branch breaks at skipped line ${broken.lines}: ${broken.unreachable} earlier entries are not on it and are not searched.\n`,
    );
  }
  const settings = await searchSettings(scope);
  const database = session.database;
  if (database !== undefined) return searchDatabase(database, input, settings);
  // Building the index reads and indexes the whole transcript (about 0.5 s per MiB): a progress
  // line on a terminal from half a MiB.
  const progress = progressLine(context.io, `Indexing ${basename(path)} for search`, statSync(path).size, { minBytes: INDEX_PROGRESS_MIN_BYTES });
  const onProgress = progress.onProgress;
  const index = await openRecallIndex(path, {
    indexPath: indexPathFor(path, settings.indexDir),
    snippetChars: settings.snippetChars,
    autoUpdate: false,
    ...(onProgress === undefined ? {} : { onProgress: (read: { bytesRead: number; bytesTotal: number }) => onProgress({ bytesRead: read.bytesRead, totalBytes: read.bytesTotal }) }),
  }).finally(() => progress.done());
  const update = index.lastUpdate;
  if (update !== null && update.skippedLines > 0 && parsed.skipped.length === 0) {
    context.io.stderr.write(`compaction: passed over ${update.skippedLines} line(s) of ${path} that are not session entries\n`);
  }
  if (update?.saveError) context.io.stderr.write(`compaction: the search index works but was not saved: ${update.saveError}\n`);
  const results = await index.search(input.query, { limit: input.limit ?? settings.limit });
  return {
    session: { path, id: index.sessionId },
    query: input.query,
    leafId: index.leafId,
    index: { path: index.indexPath, rebuilt: update?.rebuilt ?? false, reason: update?.reason ?? null, entries: index.entryCount },
    results,
  };
}

/**
 * A database session: searched in the database, by its own full-text search (SQLite FTS5,
 * Postgres tsvector) when the store has one, with the same ranking rule and snippets.
 */
async function searchDatabase(database: DatabaseSession, input: SearchInput, settings: RecallOptions): Promise<SearchReport> {
  const store = await openDatabaseStore(database.location);
  try {
    const index = await openStoreRecallIndex(store, { snippetChars: settings.snippetChars });
    const results = await index.search(input.query, { limit: input.limit ?? settings.limit });
    return {
      session: { path: database.shown, id: index.sessionId },
      query: input.query,
      leafId: index.leafId,
      index: { path: `${index.scorerName} (in ${database.shown})`, rebuilt: false, reason: null, entries: index.entryCount },
      results,
    };
  } finally {
    await store.close();
  }
}

/** The recall plugin's settings in the config for this agent, else the defaults. */
async function searchSettings(scope: CommandScope<SearchOptions, SearchInput>): Promise<RecallOptions> {
  return recallSettings(await scope.compactor()) ?? RECALL_DEFAULTS;
}

function renderReport(report: SearchReport, { out: c }: CommandContext): string {
  const where = `session ${report.session.id ?? report.session.path}`;
  if (report.results.length === 0) {
    return `No results for ${JSON.stringify(report.query)} on the current branch of ${where} (${report.session.path}).\n`;
  }
  const count = report.results.length === 1 ? "1 result" : `${report.results.length} results`;
  const blocks = report.results.map((hit) => {
    const time = hit.timestamp === "" ? "" : `  ${hit.timestamp}`;
    return `${c.bold(hit.entryId)}  ${hit.role}${c.dim(`${time}  score ${hit.score.toFixed(2)}`)}\n  ${hit.snippet}`;
  });
  return `${count} for ${JSON.stringify(report.query)} in ${where}, current branch, best first:\n\n${blocks.join("\n\n")}\n`;
}
