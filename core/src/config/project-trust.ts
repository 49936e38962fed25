/**
 * The project trust boundary (issue 16). A host that opens a folder it has not been told to
 * trust (pi before the user approves the folder) passes `trusted: false`; then nothing the
 * project holds may run: configuration files that are code are not loaded, and presets and
 * plugins that resolve to files or packages inside the project are skipped, each with a
 * COMPACTION_CONFIG_UNTRUSTED warning. Data-only files (YAML, JSON, package.json#compaction)
 * still apply, and built-in and user-level plugins still load.
 */
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, extname, isAbsolute, join, relative, resolve } from "node:path";
import { ErrorCodes } from "../errors.js";

/** A problem that did not stop loading the config, but that the user should hear about. */
export interface ConfigWarning {
  readonly code: typeof ErrorCodes.CONFIG_UNTRUSTED;
  /** One line: what was not loaded, and why. */
  readonly message: string;
  /** Absolute path of the file that was not loaded. */
  readonly file: string;
  /** The config file whose entry named it (plugins, preset, `$import`), when one did. */
  readonly source?: string;
  /** JSON pointer of that entry in `source`. */
  readonly path?: string;
  /** The name as written. */
  readonly plugin?: string;
  /** How to trust the project so that it loads. */
  readonly hint: string;
}

/** What the hint says when the host gives no words of its own (`trustHint`). */
export const DEFAULT_TRUST_HINT =
  "To load it, trust the project: in your host (pi asks when you open the folder), with trusted: true in the library, or without --no-project-code in the CLI.";

/** Extensions of config files that are data: reading them runs nothing. Every other extension is code. */
const DATA_EXTENSIONS: ReadonlySet<string> = new Set(["", ".json", ".yaml", ".yml"]);

/** True for a config file that runs when it is loaded (`.js`, `.mjs`, `.cjs`, `.ts`, ...). */
export function isCodeConfigFile(file: string): boolean {
  return !DATA_EXTENSIONS.has(extname(file).toLowerCase());
}

/** The folders a project's files live in, and the user's home, all as real paths. */
export interface ProjectBoundary {
  /** `cwd`, the folder of the config file the search found, and the nearest ancestor of `cwd` holding `.git`. */
  readonly roots: readonly string[];
  /** The user's home directory: packages installed there are user-level. */
  readonly home: string;
  /** The hint the warnings give (the host's words, or DEFAULT_TRUST_HINT). */
  readonly hint: string;
  /** True when `file` (an absolute path) lies inside one of the roots. */
  contains(file: string): boolean;
}

/**
 * The boundary of the project at `cwd` whose config file, found by the search, is `configFile`
 * (null for none, or for a file the caller named: its folder may be the user's own, e.g. home).
 */
export function projectBoundary(cwd: string, configFile: string | null, hint: string = DEFAULT_TRUST_HINT): ProjectBoundary {
  const roots = new Set<string>([realPath(cwd)]);
  if (configFile !== null) roots.add(realPath(dirname(configFile)));
  const repository = nearestGitRoot(cwd);
  if (repository !== null) roots.add(realPath(repository));
  const list = [...roots];
  return {
    roots: list,
    home: realPath(homedir()),
    hint,
    contains: (file) => {
      const real = realPath(file);
      return list.some((root) => isInside(real, root));
    },
  };
}

/** True when `file` is `dir` or below it. */
export function isInside(file: string, dir: string): boolean {
  const path = relative(dir, file);
  return path === "" || (!path.startsWith("..") && !isAbsolute(path));
}

function nearestGitRoot(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The real path of `path`, or `path` itself when it does not exist. */
function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The warning for a config file (found by the search, given as configPath, or `$import`ed) that is code. */
export function untrustedConfigFileWarning(file: string, boundary: ProjectBoundary, importedBy?: string): ConfigWarning {
  const why = importedBy === undefined ? "" : ` (imported by ${importedBy})`;
  return {
    code: ErrorCodes.CONFIG_UNTRUSTED,
    message: `Not loading the config file ${file}${why}: it is code, and the project is not trusted; the built-in defaults apply.`,
    file,
    ...(importedBy === undefined ? {} : { source: importedBy, path: "/$import" }),
    hint: `${boundary.hint} Or write the settings as data (.compactionrc as YAML or JSON), which is read without trust.`,
  };
}

/** The warning for a preset or plugin that resolves inside an untrusted project. */
export function untrustedModuleWarning(
  kind: "preset" | "plugin",
  name: string,
  file: string,
  boundary: ProjectBoundary,
  where: { readonly source?: string | undefined; readonly path?: string | undefined },
  fallback?: string,
): ConfigWarning {
  const instead = kind === "preset" ? `; using the preset '${fallback ?? "safeguard"}' instead` : "; it is left out";
  return {
    code: ErrorCodes.CONFIG_UNTRUSTED,
    message: `Not loading ${kind} '${name}' from ${file}: it is the project's code (a path its config gives, or a package inside it), and the project is not trusted${instead}.`,
    file,
    plugin: name,
    ...(where.source === undefined ? {} : { source: where.source }),
    ...(where.path === undefined ? {} : { path: where.path }),
    hint: `${boundary.hint} Built-in plugins and plugins installed for your user (next to the host, or in ~/node_modules) load without trust.`,
  };
}
