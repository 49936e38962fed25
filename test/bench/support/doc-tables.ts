/**
 * The docs' tables of figures, written by the benchmarks that measure them. A page holds each
 * table between a marker pair naming the table and the benchmark that writes it:
 *
 *     <!-- generated: continuity-loop by test/bench/continuity.bench.ts (BENCH_DOCS=1) -->
 *     | ... the Markdown table ... |
 *     <!-- /generated: continuity-loop -->
 *
 * The contract, in the order `writeDocTables` follows it:
 * 1. Without `BENCH_DOCS`, nothing is written or printed: a benchmark run is a benchmark run.
 * 2. `BENCH_DOCS=print` prints each table's Markdown and writes nothing (any run, narrowed too:
 *    to check what a run would write without waiting for the full one).
 * 3. `BENCH_DOCS=1` on a narrowed run (one of the benchmark's narrowing variables set, or a part of
 *    the full run it could not do, such as a server that is not installed) writes nothing and prints
 *    one line naming the variables or the missing part: a page shows the full run's figures only.
 * 4. `BENCH_DOCS=1` on the full default run replaces the text between each table's markers, leaves
 *    every other byte of the page as it was, and prints the page and table rewritten. A marker
 *    missing from the page, or there twice, is an error naming the page and the marker; no page is
 *    written before every table of the run has found its markers.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** One table of a page: rows[0] is the header. */
export interface DocTable {
  /** The page, from the repository root: `docs/continuity.md`. */
  readonly page: string;
  /** The table's name in the page's markers; unique across the docs. */
  readonly name: string;
  readonly rows: readonly (readonly string[])[];
}

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** The opening and closing markers of `name`, written by the benchmark file `bench` (`continuity.bench.ts`). */
export function markers(name: string, bench: string): { open: string; close: string } {
  return { open: `<!-- generated: ${name} by test/bench/${bench} (BENCH_DOCS=1) -->`, close: `<!-- /generated: ${name} -->` };
}

/** A Markdown table, `|` in cells escaped. */
export function markdownTable(rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`;
  const [header, ...body] = rows;
  if (header === undefined) throw new Error("markdownTable: expected a header row, found no rows.");
  return [line(header), `| ${header.map(() => "---").join(" | ")} |`, ...body.map(line)].join("\n");
}

/**
 * `text` with what lies between the markers of `name` replaced by `table` (on lines of its own).
 * Throws when a marker is missing or there more than once, naming `page` and the marker.
 */
export function replaceGenerated(text: string, table: { name: string; bench: string; markdown: string }, page: string): string {
  const { open, close } = markers(table.name, table.bench);
  const only = (marker: string): number => {
    const at = text.indexOf(marker);
    if (at === -1) throw new Error(`${page}: expected the marker ${marker}, found none. Put the table between "${open}" and "${close}".`);
    if (text.indexOf(marker, at + marker.length) !== -1) throw new Error(`${page}: expected the marker ${marker} once, found it more than once.`);
    return at;
  };
  const start = only(open) + open.length;
  const end = only(close);
  if (end < start) throw new Error(`${page}: expected ${close} after ${open}, found it before.`);
  return `${text.slice(0, start)}\n${table.markdown}\n${text.slice(end)}`;
}

/**
 * Writes (or prints, or refuses, per the contract above) the tables of one benchmark run.
 * `benchUrl` is the benchmark's `import.meta.url`; `narrowing` the variables that narrow its run;
 * `missing` what this run lacks of the full run, when it lacks something no variable asked for
 * ("the Postgres column (its server binaries are not installed ...)"); the run then writes nothing.
 */
export function writeDocTables(benchUrl: string, narrowing: readonly string[], tables: readonly DocTable[], missing?: string): void {
  const mode = process.env["BENCH_DOCS"]?.trim();
  if (mode === undefined || mode === "" || mode === "0") return;
  const bench = basename(fileURLToPath(benchUrl));
  if (mode === "print") {
    for (const table of tables) {
      const { open, close } = markers(table.name, bench);
      console.log(`\nBENCH_DOCS=print: ${table.page}, table ${table.name} (not written):\n${open}\n${markdownTable(table.rows)}\n${close}`);
    }
    return;
  }
  if (mode !== "1") throw new Error(`BENCH_DOCS: expected 1 (write the docs' tables) or print (print them), found "${mode}".`);
  const set = narrowing.filter((name) => process.env[name]?.trim());
  if (set.length > 0) {
    console.log(`\nBENCH_DOCS=1: no docs written: ${set.join(", ")} ${set.length === 1 ? "narrows" : "narrow"} the run, and the pages show the full run (unset ${set.length === 1 ? "it" : "them"}).`);
    return;
  }
  if (missing !== undefined) {
    console.log(`\nBENCH_DOCS=1: no docs written: the run lacks ${missing}, and the pages show the full run.`);
    return;
  }
  const pages = new Map<string, string>();
  for (const table of tables) {
    const text = pages.get(table.page) ?? readFileSync(join(REPO_ROOT, table.page), "utf8");
    pages.set(table.page, replaceGenerated(text, { name: table.name, bench, markdown: markdownTable(table.rows) }, table.page));
  }
  for (const [page, text] of pages) writeFileSync(join(REPO_ROOT, page), text);
  for (const table of tables) console.log(`BENCH_DOCS=1: rewrote ${table.page}, table ${table.name} (${relative(REPO_ROOT, fileURLToPath(benchUrl))})`);
}
