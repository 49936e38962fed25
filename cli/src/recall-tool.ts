/**
 * Whether the agent of a pi session will have the recall tool (`memory_search`) that a rolling
 * compaction's eviction note tells it to use. Only the @compaction/pi extension gives it in pi,
 * so the CLI looks where pi discovers extensions for the session's project: the agent dir's and
 * the project's `extensions/` folders and the `extensions` / `packages` lists of their
 * `settings.json`. Nothing found: the CLI runs rolling's no-recall fallback instead (a summary,
 * nothing evicted), since evicted messages the agent cannot search are lost to it.
 */
import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Compactor, type ResolvedConfig } from "@compaction/core";
import { recallSettings } from "@compaction/plugin-recall";
import { PLUGIN_NAME as ROLLING } from "@compaction/plugin-rolling";

/** The package that gives a pi agent the recall tool. */
const EXTENSION_PACKAGE = "@compaction/pi";
/** Extension folders are small; this bounds a walk through an unexpected tree. */
const MAX_DEPTH = 3;
const SOURCE_FILE = /\.(?:[cm]?[jt]s)$/;

/** What a compaction with this compactor would tell the agent, and whether the agent will have the tool. */
export interface RecallToolCheck {
  /** The tool the eviction note names. */
  readonly tool: string;
  /** Where @compaction/pi was found (a file pi loads), or null. */
  readonly givenBy: string | null;
  /** The config says the host offers the tool itself (rolling's `recall: true`). */
  readonly assertedByConfig: boolean;
}

/**
 * For a compactor that runs rolling with recall (the note names the tool): where the tool comes
 * from, or that nothing was found. Null when the compactor would not name a recall tool.
 */
export function checkRecallTool(
  compactor: Compactor<unknown>,
  projectDir: string,
  env: Readonly<Record<string, string | undefined>>,
): RecallToolCheck | null {
  const settings = recallSettings(compactor);
  if (settings === undefined || !compactor.plugins.some((plugin) => plugin.name === ROLLING)) return null;
  const rollingOptions = (compactor.config as ResolvedConfig | undefined)?.options?.[ROLLING] as { recall?: unknown } | undefined;
  const agentDir = env["PI_CODING_AGENT_DIR"] ?? join(env["HOME"] ?? homedir(), ".pi", "agent");
  const places = [agentDir, join(projectDir, ".pi")];
  return { tool: settings.toolName, givenBy: findExtension(places), assertedByConfig: rollingOptions?.recall === true };
}

function findExtension(places: readonly string[]): string | null {
  for (const place of places) {
    const settings = join(place, "settings.json");
    if (listsExtension(settings)) return settings;
    const file = sourceNaming(join(place, "extensions"), 0);
    if (file !== null) return file;
  }
  return null;
}

/** A pi settings.json whose `extensions` or `packages` name the package. */
function listsExtension(path: string): boolean {
  let settings: unknown;
  try {
    settings = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return false;
  }
  if (typeof settings !== "object" || settings === null) return false;
  const lists = [(settings as Record<string, unknown>)["extensions"], (settings as Record<string, unknown>)["packages"]];
  return lists.some((list) => Array.isArray(list) && list.some((item) => JSON.stringify(item).includes(EXTENSION_PACKAGE)));
}

/** A source file under `dir` (not in node_modules) that imports the package. */
function sourceNaming(dir: string, depth: number): string | null {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
      try {
        if (readFileSync(path, "utf8").includes(EXTENSION_PACKAGE)) return path;
      } catch {
        // Unreadable: pi could not load it either.
      }
    } else if (entry.isDirectory() && entry.name !== "node_modules" && depth < MAX_DEPTH) {
      const found = sourceNaming(path, depth + 1);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * The same compactor without the plugins that provide the recall tool: rolling then runs its
 * no-recall fallback. Shares the original's token counter (the original keeps owning it).
 */
export function withoutRecall(compactor: Compactor<unknown>, tool: string): Compactor<unknown> {
  return new Compactor<unknown>({
    adapter: compactor.adapter,
    tokenCounter: compactor.tokens.counter,
    ownsTokenCounter: false,
    summarizer: compactor.summarizer,
    plugins: compactor.plugins.filter((plugin) => plugin.provides?.includes(tool) !== true),
    ...(compactor.contextWindow === undefined ? {} : { contextWindow: compactor.contextWindow }),
    ...(compactor.reserveTokens === undefined ? {} : { reserveTokens: compactor.reserveTokens }),
    reserveSource: compactor.reserveSource,
    ...(compactor.maxOutputTokens === undefined ? {} : { maxOutputTokens: compactor.maxOutputTokens }),
    summaryMaxTokens: compactor.summaryMaxTokens,
    autoCompact: compactor.autoCompact,
    config: compactor.config,
  });
}
