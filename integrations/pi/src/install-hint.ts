/**
 * What to install, and where, when `.compactionrc` names a plugin or preset that is not there.
 * pi installs `@compaction/pi` (`pi install npm:@compaction/pi`) into a folder of its own, and
 * names in `.compactionrc` resolve from the config's folder, pi's working folder and the folder
 * `@compaction/core` was installed in. Only the last works for every project (and is the only one
 * an untrusted project may use), so that is where a summarizer such as `summarizer-openai` goes.
 */
import { createRequire } from "node:module";
import { dirname, sep } from "node:path";
import { type CompactionError, ErrorCodes, isCompactionError } from "@compaction/core";

const NODE_MODULES = `${sep}node_modules${sep}`;

/** The folder whose node_modules holds the extension's @compaction/core, or undefined outside one. */
export function extensionInstallRoot(coreEntry: string = createRequire(import.meta.url).resolve("@compaction/core")): string | undefined {
  const at = coreEntry.lastIndexOf(NODE_MODULES);
  return at < 0 ? undefined : coreEntry.slice(0, at);
}

/** The package core's message says to install (`npm install <id>`), else the name as written. */
function packageToInstall(error: CompactionError): string | undefined {
  const named = /npm install ([^\s),]+)/.exec(error.hint ?? "")?.[1];
  return named ?? error.plugin;
}

/**
 * For COMPACTION_PLUGIN_NOT_FOUND on a package name: the command that installs it beside the
 * extension. Undefined for other errors and for paths (a path names the user's own file).
 */
export function installBesideHint(error: unknown, root: string | undefined = extensionInstallRoot()): string | undefined {
  if (!isCompactionError(error) || error.code !== ErrorCodes.PLUGIN_NOT_FOUND) return undefined;
  const name = error.plugin;
  if (name === undefined || name.startsWith(".") || name.startsWith("/")) return undefined;
  const id = packageToInstall(error);
  if (id === undefined) return undefined;
  const where =
    root === undefined
      ? `where Node resolves @compaction/core from (${dirname(createRequire(import.meta.url).resolve("@compaction/core"))})`
      : `beside the extension: npm install --prefix ${root} ${id}`;
  // Keep core's suggestion for a misspelt built-in name: that is the likelier fix.
  const suggestion = /Did you mean '[^']+'\?/.exec(error.hint ?? "")?.[0];
  const install = `Plugins and presets named in .compactionrc must be installed next to @compaction/pi, which pi loads from its own folder; install ${id} ${where}, then /reload.`;
  return suggestion === undefined ? install : `${suggestion} Otherwise: ${install}`;
}
