/**
 * `compaction config`: which configuration is in force for this folder (and `--agent`): the
 * file loaded (or none, defaults), the agent's section, the preset and its plugins in tap order
 * with their options in force and where each value came from (default, preset, file).
 */
import { type AppliedPlugin, type ConfigWarning, type ResolvedConfig, type SettingSource, suggest } from "@compaction/core";
import type { CommandContext } from "../command-context.js";
import { type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { configOf } from "../load-compactor.js";

interface ConfigOptions extends CommonOptions {
  readonly preset?: string;
}

/** Where one value came from: the plugin's default, the preset's entry, the config file (JSON pointer), or the command line. */
export type ValueSource = { readonly from: "default" } | { readonly from: "preset" | "file"; readonly file: string | null; readonly path: string } | { readonly from: "command line" };

/** One option of one plugin. */
export interface OptionReport {
  readonly name: string;
  readonly value: unknown;
  readonly source: ValueSource;
}

/** One plugin applied, in the order plugins were applied (the tap order within a stage). */
export interface PluginReport {
  readonly name: string;
  /** `config`: the config's own `plugins`; `preset`: the preset's list. */
  readonly from: "config" | "preset";
  /** The name or path as written, and the file loaded. */
  readonly request: string | null;
  readonly file: string | null;
  /** Its options in force; `reportsDefaults` false: only the ones given are known (the plugin does not report its options). */
  readonly options: readonly OptionReport[];
  readonly reportsDefaults: boolean;
}

/** What `config --json` prints. */
export interface ConfigReport {
  /** The config file loaded, or null: none found, the defaults apply. */
  readonly file: string | null;
  readonly agent: string | null;
  /** The `agents.<name>` section applied, or null (the top-level settings). */
  readonly agentSection: string | null;
  /** With --agent and no section of that name: the nearest section's name, when it looks like a typo. */
  readonly nearestSection: string | null;
  /** False with --no-project-code. */
  readonly projectCode: boolean;
  readonly preset: { readonly name: string; readonly file: string; readonly source: ValueSource };
  readonly settings: readonly OptionReport[];
  readonly plugins: readonly PluginReport[];
  /** Per hook, the taps in the order they run: `plugin (stage)`. */
  readonly taps: Readonly<Record<string, readonly { readonly plugin: string; readonly stage: number }[]>>;
  readonly warnings: readonly ConfigWarning[];
}

/** `compaction config`. */
export const configCommand = defineCommand({
  name: "config",
  description: "show the configuration in force here: file, agent section, preset, plugins in tap order, options and where each came from",
  agent: true,
  options: [["-p, --preset <name>", "as if this preset were configured (as compact --preset)"]],
  run: configReport,
  text: (report, { context }) => renderReport(report, context),
});

const SETTINGS = ["contextWindow", "reserveTokens", "adapter", "tokenizer", "summarizer", "autoCompact"] as const;

async function configReport(scope: CommandScope<ConfigOptions, undefined>): Promise<ConfigReport> {
  // What applied is the report itself, on stdout: not also said on stderr.
  const compactor = await scope.compactor({ announce: false, preset: scope.options.preset });
  const config = configOf(compactor);
  const applied = config.applied;
  if (applied === null) throw new Error("createCompactor returned a config without the plugins applied");
  const taps = Object.fromEntries(
    Object.entries(compactor.hooks).map(([hook, value]) => [
      hook,
      (value as unknown as { taps: ReadonlyArray<{ name: string; stage?: number }> }).taps.map((tap) => ({ plugin: tap.name, stage: tap.stage ?? 0 })),
    ]),
  );
  return {
    file: config.filepath,
    agent: config.agent,
    agentSection: config.agentSection,
    nearestSection: config.agent === null || config.agentSection !== null ? null : (suggest(config.agent, config.agentSections) ?? null),
    projectCode: config.trusted,
    preset: { name: applied.preset.name, file: applied.preset.file, source: settingSource(config, config.sources.preset) },
    // A reserve the config leaves unset follows the window: shown as the one for the config's window.
    settings: SETTINGS.map((name) => ({ name, value: name === "reserveTokens" ? compactor.reserveFor(config.contextWindow) : config[name], source: settingSource(config, config.sources[name]) })),
    plugins: applied.plugins.map(pluginReport),
    taps,
    warnings: config.warnings,
  };
}

function settingSource(config: ResolvedConfig, source: SettingSource): ValueSource {
  if (source.from === "caller") return { from: "command line" };
  if (source.from === "default") return { from: "default" };
  return { from: "file", file: config.filepath, path: source.path ?? "" };
}

function pluginReport(plugin: AppliedPlugin): PluginReport {
  const names = new Set([...Object.keys(plugin.options ?? {}), ...Object.keys(plugin.given)]);
  const options = [...names].map((name): OptionReport => {
    const given = Object.hasOwn(plugin.given, name) ? plugin.given[name] : undefined;
    const value = plugin.options !== null && Object.hasOwn(plugin.options, name) ? plugin.options[name] : given?.value;
    return { name, value, source: given === undefined ? { from: "default" } : { from: given.from, file: given.file, path: given.path } };
  });
  return { name: plugin.name, from: plugin.from, request: plugin.request, file: plugin.file, options, reportsDefaults: plugin.options !== null };
}

function renderReport(report: ConfigReport, { out: c }: CommandContext): string {
  const lines: string[] = [];
  const label = (text: string) => c.bold(text.padEnd(15));
  lines.push(`${label("Config file")}${report.file ?? "none, defaults"}`);
  lines.push(`${label("Agent")}${report.agent === null ? "none given: the top-level settings" : report.agentSection === null ? `${report.agent}: no section of its own, the top-level settings${report.nearestSection === null ? "" : ` (did you mean '${report.nearestSection}'?)`}` : `${report.agent}: agents.${report.agentSection}`}`);
  lines.push(`${label("Project code")}${report.projectCode ? "runs (pass --no-project-code to refuse it)" : "refused (--no-project-code): data-only settings, built-in and user-level plugins"}`);
  lines.push(`${label("Preset")}${report.preset.name}  ${c.dim(`${describeSource(report.preset.source)}; ${report.preset.file}`)}`);
  for (const setting of report.settings) lines.push(`${label(setting.name)}${formatValue(setting.value)}  ${c.dim(describeSource(setting.source))}`);
  lines.push("", c.bold("Plugins, in the order they are applied:"));
  report.plugins.forEach((plugin, index) => {
    const origin = plugin.from === "preset" ? `from the preset ${report.preset.name}` : "from the config's plugins";
    lines.push(`  ${index + 1}. ${c.bold(plugin.name)}  ${c.dim(`${origin}${plugin.file === null ? "" : `; ${plugin.file}`}`)}`);
    if (!plugin.reportsDefaults) lines.push(c.dim("     (this plugin does not report its defaults: only the options given are shown)"));
    const width = Math.max(0, ...plugin.options.map((option) => option.name.length));
    for (const option of plugin.options) lines.push(`     ${option.name.padEnd(width)}  ${formatValue(option.value)}  ${c.dim(describeSource(option.source))}`);
  });
  lines.push("", c.bold("Taps, in the order they run:"));
  for (const [hook, taps] of Object.entries(report.taps)) {
    lines.push(`  ${hook.padEnd(14)}${taps.length === 0 ? c.dim("none") : taps.map((tap) => `${tap.plugin} (${tap.stage})`).join(", ")}`);
  }
  for (const warning of report.warnings) lines.push("", `${c.yellow("warning:")} ${warning.message}`, `hint: ${warning.hint}`);
  return `${lines.join("\n")}\n`;
}

function describeSource(source: ValueSource): string {
  if (source.from === "default") return "default";
  if (source.from === "command line") return "command line";
  return `${source.from} ${source.path}${source.from === "file" || source.file === null ? "" : ` in ${source.file}`}`;
}

function formatValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
