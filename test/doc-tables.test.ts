/**
 * The docs' generated tables: `replaceGenerated` rewrites only what lies between a table's markers,
 * and every marker pair in docs/ is whole and names a benchmark that writes that table
 * (bench/support/doc-tables.ts has the contract).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { markdownTable, markers, replaceGenerated, writeDocTables } from "./bench/support/doc-tables.js";
import { markdownUnder } from "./support/markdown.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("replaceGenerated", () => {
  const dir = mkdtempSync(join(tmpdir(), "doc-tables-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const { open, close } = markers("speed", "speed.bench.ts");
  const before = "# Speed\r\n\nSome prose, | with a pipe.\n\n";
  const after = "\n\nMore prose: 1.2x.\n<!-- generated: other by test/bench/other.bench.ts (BENCH_DOCS=1) -->\n| kept |\n";
  const page = `${before}${open}\n| old | table |\n| --- | --- |\n| 1 | 2 |\n${close}${after}`;
  const table = { name: "speed", bench: "speed.bench.ts", markdown: markdownTable([["preset", "ms"], ["safeguard", "16.9"]]) };

  it("replaces the text between the markers and leaves every other byte of the page as it was", () => {
    const file = join(dir, "page.md");
    writeFileSync(file, page);
    const text = replaceGenerated(readFileSync(file, "utf8"), table, "page.md");
    expect(text).toBe(`${before}${open}\n| preset | ms |\n| --- | --- |\n| safeguard | 16.9 |\n${close}${after}`);
    expect(replaceGenerated(text, table, "page.md")).toBe(text);
  });

  it("names the page and the marker when the opening marker is missing", () => {
    expect(() => replaceGenerated(page.replace(open, ""), table, "docs/speed.md")).toThrow(`docs/speed.md: expected the marker ${open}, found none.`);
  });

  it("names the page and the marker when the closing marker is missing", () => {
    expect(() => replaceGenerated(page.replace(close, ""), table, "docs/speed.md")).toThrow(`docs/speed.md: expected the marker ${close}, found none.`);
  });

  it("refuses a marker that is there twice", () => {
    expect(() => replaceGenerated(`${page}\n${open}\n`, table, "docs/speed.md")).toThrow(`docs/speed.md: expected the marker ${open} once, found it more than once.`);
  });

  it("refuses a closing marker before the opening one", () => {
    expect(() => replaceGenerated(`${close}\n${open}\n`, table, "docs/speed.md")).toThrow(`docs/speed.md: expected ${close} after ${open}, found it before.`);
  });

  it("escapes a pipe in a cell", () => {
    expect(markdownTable([["a"], ["x | y"]])).toBe("| a |\n| --- |\n| x \\| y |");
  });
});

describe("writeDocTables on a run that is not the full one", () => {
  // A page that does not exist: a writer that tried to read or write it would throw.
  const tables = [{ page: "docs/no-such-page.md", name: "speed", rows: [["preset", "ms"], ["safeguard", "16.9"]] }];
  const logged = (): string => vi.mocked(console.log).mock.calls.map((call) => call.join(" ")).join("\n");
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it("writes nothing and names the variable that narrowed the run", () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.stubEnv("BENCH_DOCS", "1");
    vi.stubEnv("SPEED_PRESETS", "safeguard");
    writeDocTables(import.meta.url, ["SPEED_FIXTURES", "SPEED_PRESETS"], tables);
    expect(logged()).toContain("BENCH_DOCS=1: no docs written: SPEED_PRESETS narrows the run");
  });

  it("writes nothing and names what the run lacks", () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.stubEnv("BENCH_DOCS", "1");
    writeDocTables(import.meta.url, ["SPEED_PRESETS"], tables, "the Postgres column (no binaries)");
    expect(logged()).toContain("BENCH_DOCS=1: no docs written: the run lacks the Postgres column (no binaries)");
  });

  it("prints the table it would write when BENCH_DOCS=print, narrowed or not", () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.stubEnv("BENCH_DOCS", "print");
    vi.stubEnv("SPEED_PRESETS", "safeguard");
    writeDocTables(import.meta.url, ["SPEED_PRESETS"], tables, "the Postgres column (no binaries)");
    expect(logged()).toContain(`${markers("speed", "doc-tables.test.ts").open}\n| preset | ms |\n| --- | --- |\n| safeguard | 16.9 |`);
  });
});

describe("the generated tables in docs/", () => {
  // Names are lower-case words joined by "-"; the marker written out in prose (`<name>`, `<file>`) is no table.
  const OPEN = /<!-- generated: ([a-z0-9-]+) by test\/bench\/([\w.-]+\.ts) \(BENCH_DOCS=1\) -->/g;
  const pages = markdownUnder(join(ROOT, "docs")).map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, "utf8") }));
  const found = pages.flatMap(({ file, text }) => [...text.matchAll(OPEN)].map((match) => ({ file, name: match[1] as string, bench: match[2] as string, at: match.index })));

  it("the docs hold generated tables", () => {
    expect(found.length).toBeGreaterThan(0);
  });

  it("every line that opens a generated table is a marker the writer reads", () => {
    const lines = pages.flatMap(({ file, text }) => text.split("\n").filter((line) => line.startsWith("<!-- generated:")).map((line) => `${file}: ${line}`));
    expect(lines.filter((line) => !new RegExp(`: ${OPEN.source}$`).test(line))).toEqual([]);
  });

  it("every table name is used once across the docs", () => {
    const names = found.map((table) => table.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it.each(found.map((table) => [`${table.file}: ${table.name}`, table] as const))("%s has its closing marker after the opening one, and a table between", (_, table) => {
    const text = pages.find((p) => p.file === table.file)?.text ?? "";
    const { open, close } = markers(table.name, table.bench);
    const end = text.indexOf(close);
    expect(end, `${table.file}: expected ${close} after ${open}`).toBeGreaterThan(table.at);
    expect(text.indexOf(close, end + close.length), `${table.file}: ${close} twice`).toBe(-1);
    const between = text.slice(table.at + open.length, end).trim().split("\n");
    expect(between.length).toBeGreaterThan(2);
    expect(between.every((line) => line.startsWith("| ") && line.endsWith(" |"))).toBe(true);
  });

  it.each(found.map((table) => [`${table.file}: ${table.name}`, table] as const))("%s names a benchmark that writes that table", (_, table) => {
    const bench = join(ROOT, "test/bench", table.bench);
    expect(existsSync(bench), `${table.file}: test/bench/${table.bench} does not exist`).toBe(true);
    const source = readFileSync(bench, "utf8");
    expect(source).toMatch(/\bwriteDocTables\(import\.meta\.url,/);
    expect(source, `test/bench/${table.bench} never names the table "${table.name}"`).toContain(`"${table.name}"`);
    expect(source).toContain(table.file);
  });

  it("every closing marker has its opening one", () => {
    for (const { file, text } of pages) {
      for (const match of text.matchAll(/<!-- \/generated: ([a-z0-9-]+) -->/g)) {
        expect(found.some((table) => table.file === file && table.name === match[1]), `${file}: <!-- /generated: ${match[1]} --> has no opening marker`).toBe(true);
      }
    }
  });
});
