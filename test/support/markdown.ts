/**
 * Just enough Markdown reading for test/docs-links.test.ts: headings and the anchors GitHub makes
 * of them, links and code blocks outside code, and the HTML comment on the line before a block.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export interface Link {
  readonly line: number;
  readonly target: string;
}

export interface CodeBlock {
  readonly line: number;
  /** The info string's first word, lower-cased ("" for none). */
  readonly lang: string;
  readonly body: string;
  /** The line right before the opening fence, trimmed. */
  readonly before: string;
}

export interface MarkdownFile {
  readonly anchors: ReadonlySet<string>;
  readonly links: readonly Link[];
  readonly blocks: readonly CodeBlock[];
}

/**
 * The anchor GitHub gives a heading: its text as rendered (no code ticks, emphasis or link
 * targets), lower-cased, with everything but letters, digits, spaces, "-" and "_" removed and each
 * space made a "-"; a repeated anchor gets "-1", "-2", ...
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "").replace(/\s/g, "-");
}

/** Reads headings, links and code blocks; text inside fenced blocks and code spans is not read for links. */
export function parseMarkdown(text: string): MarkdownFile {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const links: Link[] = [];
  const blocks: CodeBlock[] = [];
  const lines = text.split("\n");
  let fence: { marker: string; line: number; lang: string; before: string; body: string[] } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const trimmed = line.trim();
    if (fence) {
      if (trimmed.startsWith(fence.marker) && new RegExp(`^\\${fence.marker[0]}{${fence.marker.length},}$`).test(trimmed)) {
        blocks.push({ line: fence.line, lang: fence.lang, body: fence.body.join("\n"), before: fence.before });
        fence = undefined;
      } else fence.body.push(line);
      continue;
    }
    const open = /^(`{3,}|~{3,})\s*([^\s`]*)/.exec(trimmed);
    if (open) {
      fence = { marker: open[1] as string, line: i + 1, lang: (open[2] ?? "").toLowerCase(), before: (lines[i - 1] ?? "").trim(), body: [] };
      continue;
    }
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = githubSlug(heading[1] as string);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(match[1] as string);
    const outsideCode = line.replace(/(`+)[\s\S]*?\1/g, (span) => " ".repeat(span.length));
    for (const match of outsideCode.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: i + 1, target: match[1] as string });
    }
    const reference = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)/.exec(outsideCode);
    if (reference) links.push({ line: i + 1, target: reference[1] as string });
  }
  if (fence) blocks.push({ line: fence.line, lang: fence.lang, body: fence.body.join("\n"), before: fence.before });
  return { anchors, links, blocks };
}

const cache = new Map<string, MarkdownFile>();
function parsed(file: string): MarkdownFile {
  let result = cache.get(file);
  if (!result) cache.set(file, (result = parseMarkdown(readFileSync(file, "utf8"))));
  return result;
}

/**
 * What is wrong with each relative link of `file` (a path under `root`): a target that does not
 * exist, or an anchor that is no heading of the Markdown file it points at. Web and mail links
 * are not followed.
 */
export function brokenLinks(file: string, root: string): string[] {
  const problems: string[] = [];
  const where = (link: Link) => `${relative(root, file)}:${link.line}`;
  for (const link of parsed(file).links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
    const [path = "", anchor] = link.target.split("#", 2);
    const target = path === "" ? file : resolve(dirname(file), decodeURI(path));
    if (!existsSync(target)) {
      problems.push(`${where(link)}: ${link.target}: ${relative(root, target)} does not exist`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!target.endsWith(".md") || statSync(target).isDirectory()) continue;
    if (!parsed(target).anchors.has(decodeURIComponent(anchor).toLowerCase())) {
      problems.push(`${where(link)}: ${link.target}: ${relative(root, target)} has no heading whose anchor is #${anchor}`);
    }
  }
  return problems;
}

/** The Markdown files `file` links to (existing, relative links only). */
export function linkedMarkdown(file: string): string[] {
  const out: string[] = [];
  for (const link of parsed(file).links) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) continue;
    const path = link.target.split("#", 1)[0] ?? "";
    if (path === "") continue;
    const target = resolve(dirname(file), decodeURI(path));
    if (target.endsWith(".md") && existsSync(target)) out.push(target);
  }
  return out;
}

export function codeBlocks(file: string): readonly CodeBlock[] {
  return parsed(file).blocks;
}

/** Every `.md` file under `dir`, recursively. */
export function markdownUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}
