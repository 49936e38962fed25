/**
 * The documentation holds together: every relative link and #anchor in README.md, docs/**\/*.md and
 * every package's README resolves (the file exists; the anchor is one GitHub makes of a heading
 * there), every docs page is reachable from the README, and every code block in README.md, docs/
 * and the package READMEs that is a command or a program is either run by a test or says why not.
 *
 * A command or program is a block tagged js, mjs, cjs, jsx, javascript, ts, tsx, typescript, sh,
 * bash, shell, zsh or console, or an untagged block whose first line starts with "$ ". Each needs,
 * on the line right before its opening fence, one of:
 * - `<!-- run-by: path/to/a.test.ts -->`: that test file exists and reads this page (it names the
 *   page's path, e.g. "docs/configuration.md", or "README.md" for the README);
 * - `<!-- example: name -->`: a test file contains this same marker (it takes the block after it);
 * - `<!-- not-run: why -->`: not run, and why (a fragment, needs a key, ...);
 * or be a shell block of only `npm ci`, `npm test` and `npm run <script>` (joined by `&&`, with
 * comments), each script one of the root package.json's: the README's "Try it" commands, which
 * CI runs as they are.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { brokenLinks, codeBlocks, linkedMarkdown, markdownUnder, parseMarkdown, type CodeBlock } from "./support/markdown.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const rel = (file: string) => relative(ROOT, file);

const rootPackage = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[]; scripts: Record<string, string> };

/** Each workspace folder (the root package.json's globs expanded). */
function workspaceDirs(): string[] {
  return rootPackage.workspaces.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [join(ROOT, pattern)];
    const parent = join(ROOT, pattern.slice(0, -2));
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name));
  });
}

const README = join(ROOT, "README.md");
const DOCS = markdownUnder(join(ROOT, "docs"));
const PACKAGE_READMES = workspaceDirs()
  .map((dir) => join(dir, "README.md"))
  .filter((file) => existsSync(file));
const CHECKED = [README, ...DOCS, ...PACKAGE_READMES];

/** Test files anywhere in the repository (not dependencies or builds), for `example:` markers. */
function testFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.test\.[cm]?[jt]s$/.test(entry.name) ? [path] : [];
  });
}
const TESTS = testFiles().map((file) => ({ file, text: readFileSync(file, "utf8") }));

const PROGRAM = new Set(["js", "mjs", "cjs", "jsx", "javascript", "ts", "tsx", "typescript", "sh", "bash", "shell", "zsh", "console"]);
const SHELL = new Set(["sh", "bash", "shell", "zsh", "console"]);

function isProgram(block: CodeBlock): boolean {
  if (PROGRAM.has(block.lang)) return true;
  return (block.lang === "" || block.lang === "text") && /^\$ /.test(block.body.trimStart());
}

/** A shell block of only npm ci / npm test / npm run <a root script>, or why it is not. */
function npmScriptsOnly(block: CodeBlock): string | undefined {
  if (!SHELL.has(block.lang)) return "it is not a shell block";
  const commands = block.body
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((line) => line.split("&&").map((part) => part.trim()));
  if (commands.length === 0) return "it holds no command";
  for (const command of commands) {
    const run = /^npm run ([\w:-]+)(\s|$)/.exec(command);
    if (run) {
      if (!(run[1] as string in rootPackage.scripts)) return `\`${command}\`: the root package.json has no script "${run[1]}"`;
      continue;
    }
    if (command !== "npm ci" && command !== "npm test") return `\`${command}\` is not npm ci, npm test or npm run <script>`;
  }
  return undefined;
}

/** Why `block` of `file` is neither run by a test nor marked as not run, or undefined when it is fine. */
export function unaccountedBlock(file: string, block: CodeBlock): string | undefined {
  const where = `${rel(file)}:${block.line} (\`\`\`${block.lang})`;
  const marker = /^<!--\s*(run-by|example|not-run):\s*(.*?)\s*-->$/.exec(block.before);
  if (marker) {
    const [, kind, value = ""] = marker;
    if (value === "") return `${where}: the ${kind} marker is empty`;
    if (kind === "not-run") return undefined;
    if (kind === "example") {
      return TESTS.some((test) => test.text.includes(block.before)) ? undefined : `${where}: no test file contains ${block.before}`;
    }
    const test = join(ROOT, value);
    if (!existsSync(test)) return `${where}: run-by names ${value}, which does not exist`;
    return readFileSync(test, "utf8").includes(rel(file)) ? undefined : `${where}: ${value} does not read ${rel(file)}`;
  }
  const npm = npmScriptsOnly(block);
  if (npm === undefined) return undefined;
  return `${where}: a command or program neither run by a test nor marked (<!-- run-by: test file -->, <!-- example: name -->, <!-- not-run: why -->); ${npm}`;
}

describe("the documentation's links", () => {
  it("finds the pages: the README, docs/ and a README for every package", () => {
    expect(DOCS.map(rel)).toEqual(expect.arrayContaining(["docs/getting-started.md", "docs/configuration.md", "docs/hosts/pi.md"]));
    expect(PACKAGE_READMES.map(rel)).toEqual(expect.arrayContaining(["core/README.md", "cli/README.md", "integrations/pi/README.md"]));
  });

  it.each(CHECKED.map((file) => [rel(file), file] as const))("%s: every relative link and #anchor resolves", (_name, file) => {
    expect(brokenLinks(file, ROOT)).toEqual([]);
  });

  it("reaches every docs page and every package README from README.md by following links", () => {
    const reached = new Set<string>([README]);
    const queue = [README];
    while (queue.length > 0) {
      for (const next of linkedMarkdown(queue.shift() as string)) {
        if (!reached.has(next)) {
          reached.add(next);
          queue.push(next);
        }
      }
    }
    expect([...DOCS, ...PACKAGE_READMES].filter((file) => !reached.has(file)).map(rel)).toEqual([]);
  });

  it("reports a missing file, a missing anchor and a missing anchor in the same page (the checker itself)", () => {
    const page = parseMarkdown(
      [
        "# A page",
        "## The core: `@compaction/core`",
        "## Trust: a project's code runs only when the project is trusted",
        "## Repeated",
        "## Repeated",
        "[ok](#the-core-compactioncore) [ok](#trust-a-projects-code-runs-only-when-the-project-is-trusted) [ok](#repeated-1)",
        "`[not a link](nowhere.md)`",
        "```md",
        "[not a link either](nowhere.md)",
        "```",
      ].join("\n"),
    );
    expect([...page.anchors]).toEqual(["a-page", "the-core-compactioncore", "trust-a-projects-code-runs-only-when-the-project-is-trusted", "repeated", "repeated-1"]);
    expect(page.links.map((link) => link.target)).toEqual(["#the-core-compactioncore", "#trust-a-projects-code-runs-only-when-the-project-is-trusted", "#repeated-1"]);
    // A real page with one broken link of each kind (and one good one), in the repo's scratch folder.
    const dir = join(ROOT, "test", ".tmp");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `links-self-test-${process.pid}.md`);
    writeFileSync(file, "# Self test\n\n[gone](no-such-page.md) [bad anchor](../../docs/configuration.md#no-such-heading) [here](#nor-this) [fine](../../docs/configuration.md#trust-a-projects-code-runs-only-when-the-project-is-trusted)\n");
    try {
      expect(brokenLinks(file, ROOT)).toEqual([
        expect.stringMatching(/:3: no-such-page\.md: test\/\.tmp\/no-such-page\.md does not exist$/),
        expect.stringMatching(/:3: \.\.\/\.\.\/docs\/configuration\.md#no-such-heading: docs\/configuration\.md has no heading whose anchor is #no-such-heading$/),
        expect.stringMatching(/:3: #nor-this: .* has no heading whose anchor is #nor-this$/),
      ]);
    } finally {
      rmSync(file);
    }
  });
});

describe("the documentation's code blocks", () => {
  const pages = [README, ...DOCS, ...PACKAGE_READMES];

  it("has command and program blocks to check (the check is not vacuous)", () => {
    const programs = pages.flatMap((file) => codeBlocks(file).filter(isProgram));
    expect(programs.length).toBeGreaterThan(10);
  });

  it.each(pages.map((file) => [rel(file), file] as const))("%s: every command or program block is run by a test or marked as not run", (_name, file) => {
    expect(codeBlocks(file).filter(isProgram).map((block) => unaccountedBlock(file, block)).filter((problem) => problem !== undefined)).toEqual([]);
  });

  it("accepts the README's npm commands only when they name root scripts (the checker itself)", () => {
    const block = (body: string, before = ""): CodeBlock => ({ line: 1, lang: "sh", body, before });
    expect(unaccountedBlock(README, block("# try it\nnpm ci && npm run demo\nnpm ci && npm test"))).toBeUndefined();
    expect(unaccountedBlock(README, block("npm ci && npm run no-such-script"))).toMatch(/no script "no-such-script"/);
    expect(unaccountedBlock(README, block("git clone x"))).toMatch(/neither run by a test nor marked/);
    expect(unaccountedBlock(README, block("git clone x", "<!-- not-run: needs a remote -->"))).toBeUndefined();
    expect(unaccountedBlock(README, block("git clone x", "<!-- not-run: -->"))).toMatch(/marker is empty/);
    expect(unaccountedBlock(README, block("x", "<!-- run-by: test/no-such.test.ts -->"))).toMatch(/does not exist/);
    // Built here so that this file does not itself contain the marker it checks for.
    const unknownExample = ["<!-- example:", "no-test-has-this-marker -->"].join(" ");
    expect(unaccountedBlock(README, block("x", unknownExample))).toMatch(/no test file contains/);
  });
});
