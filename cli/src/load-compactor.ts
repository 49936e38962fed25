/**
 * The Compactor from the project's config, reading messages in the transcript's format. Like
 * ESLint, the CLI runs the project's code configuration (`.compactionrc.mjs`, plugin files);
 * `--no-project-code` (or COMPACTION_NO_PROJECT_CODE=1) refuses it: the library's
 * `trusted: false`. What applied is said once on stderr: the agent's section (with `--agent`)
 * and anything left out because the project is not trusted.
 */
import { type AdapterName, type ConfigWarning, createCompactor, type Compactor, type ResolvedConfig, suggest, type TokenCountStore } from "@compaction/core";
import type { CommandContext, GlobalOptions } from "./command-context.js";
import { openEncoderImageCache } from "./encoder-image-cache.js";
import { type CliIo, envSwitchOn } from "./io.js";

export interface CompactorChoice {
  /** `--agent`: the config section to apply. */
  readonly agent?: string | undefined;
  /** `--preset`: run this preset instead of the configured one. */
  readonly preset?: string | undefined;
  /** The option that named `preset`, for the error when it does not resolve (default `--preset`). */
  readonly presetNamedBy?: string;
  /**
   * The transcript's message format. The file decides it, not the config's `adapter` (which
   * describes a host's in-memory messages): a pi session holds pi messages whatever the config says.
   */
  readonly adapter?: AdapterName;
  /** Say on stderr which section applied and what was left out (default true; `config` shows it on stdout instead). */
  readonly announce?: boolean;
  /** The session's kept counts (count-cache.ts), which the compactor's tiktoken counter reads first. */
  readonly countStore?: TokenCountStore | undefined;
}

/** Environment variable that, set to anything but "" or "0", does what `--no-project-code` does. */
export const NO_PROJECT_CODE_ENV = "COMPACTION_NO_PROJECT_CODE";

/** The hint the untrusted warnings give on the command line. */
export const CLI_TRUST_HINT = `To load it, run without --no-project-code (and without ${NO_PROJECT_CODE_ENV}).`;

/** Whether the project's code may run: not with `--no-project-code` or COMPACTION_NO_PROJECT_CODE. */
export function projectCodeAllowed(globals: GlobalOptions, env: CliIo["env"]): boolean {
  return globals.projectCode !== false && !envSwitchOn(env, NO_PROJECT_CODE_ENV);
}

/** A compactor for the working directory's config with the agent's section, the preset and the adapter applied. */
export async function loadCompactor(context: CommandContext, choice: CompactorChoice = {}): Promise<Compactor<unknown>> {
  const trusted = projectCodeAllowed(context.globals, context.io.env);
  const encoderImage = openEncoderImageCache(context.io);
  const compactor = await createCompactor<unknown>({
    cwd: context.io.cwd,
    adapter: choice.adapter ?? "pi",
    trusted,
    ...(trusted ? {} : { trustHint: CLI_TRUST_HINT }),
    ...(choice.agent === undefined ? {} : { agent: choice.agent }),
    ...(choice.preset === undefined ? {} : { preset: choice.preset, presetNamedBy: choice.presetNamedBy ?? "--preset" }),
    ...(choice.countStore === undefined ? {} : { countStore: choice.countStore }),
    ...(encoderImage === undefined ? {} : { encoderImage }),
  });
  const config = configOf(compactor);
  const notice = [agentNotice(config), ...config.warnings.map(warningNotice)].filter((line) => line !== "").join("");
  if (notice !== "" && choice.announce !== false) context.io.stderr.write(notice);
  return compactor;
}

/** The config the compactor was built from. */
export function configOf(compactor: Compactor<unknown>): ResolvedConfig {
  return compactor.config as ResolvedConfig;
}

/** Which configuration applied, as `--json` output carries it. */
export interface ConfigSummary {
  /** The config file loaded, or null (defaults). */
  readonly file: string | null;
  /** `--agent` as given, or null. */
  readonly agent: string | null;
  /** The `agents.<name>` section applied, or null (the top-level settings). */
  readonly agentSection: string | null;
  /** False with `--no-project-code`. */
  readonly projectCode: boolean;
  /** What was left out because the project's code may not run. */
  readonly warnings: readonly ConfigWarning[];
}

export function configSummary(config: ResolvedConfig): ConfigSummary {
  return { file: config.filepath, agent: config.agent, agentSection: config.agentSection, projectCode: config.trusted, warnings: config.warnings };
}

/** The line saying which section applied for `--agent` (nothing without `--agent`). */
export function agentNotice(config: ResolvedConfig): string {
  if (config.agent === null) return "";
  if (config.filepath === null) return `compaction: no config file found; agent '${config.agent}' gets the defaults.\n`;
  if (config.agentSection !== null) return `compaction: using agents.${config.agentSection} of ${config.filepath}.\n`;
  const nearest = suggest(config.agent, config.agentSections);
  const typo = nearest === undefined ? "" : ` Did you mean '${nearest}'?`;
  return `compaction: agent '${config.agent}' has no section in ${config.filepath}; using the top-level settings.${typo}\n`;
}

function warningNotice(warning: ConfigWarning): string {
  return `compaction: warning: ${warning.message}\nhint: ${warning.hint}\n`;
}
