/**
 * The plugin as an install lays it out, in a directory of its own: this package's run-time files,
 * and under `node_modules` a copy of every package it depends on, directly or not (the
 * `@compaction` packages' run-time files, the others whole, from the repo's `node_modules`).
 *
 * Why not link the workspace itself: OpenClaw captures a linked plugin's whole package tree, and
 * each dependency's, when it loads it, and refuses the load ("Plugin source changed while
 * preparing its reload") when a file in them changes meanwhile. In the workspace, other tasks of
 * `npm test` write there while this package's tests run (turbo's logs and vitest's reports in each
 * package directory), so the Gateway sometimes ran OpenClaw's own engine instead of ours. Nothing
 * writes in this copy. Copies, not links: OpenClaw's install refuses a `node_modules` link to a
 * target outside the plugin.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";

/** What one of our packages needs at run time: its manifest, its build and its schemas. */
const RUNTIME_ENTRIES = ["package.json", "openclaw.plugin.json", "dist", "schema"] as const;
/** Provided by the host, never copied. */
const HOST_PACKAGES = new Set(["openclaw"]);

function copyRuntimeFiles(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of RUNTIME_ENTRIES) {
    if (existsSync(join(from, entry))) cpSync(join(from, entry), join(to, entry), { recursive: true, dereference: true });
  }
}

/** The packages a package needs installed beside it (not its peers: the host or the plugin brings those). */
function dependencies(packageDir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
  return [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})];
}

/**
 * Copies the plugin in `pluginDir` to `destination` (see above); `repoModules` is the repo's
 * `node_modules`, where npm hoists every dependency and links the workspace packages. Returns
 * `destination`.
 */
export function copyPluginForInstall(pluginDir: string, repoModules: string, destination: string): string {
  copyRuntimeFiles(pluginDir, destination);
  const copied = new Set<string>();
  const pending = dependencies(pluginDir);
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (copied.has(name) || HOST_PACKAGES.has(name)) continue;
    copied.add(name);
    const installed = join(repoModules, name);
    if (!existsSync(installed)) continue; // an optional dependency npm skipped, or one nested in its dependent (copied with it)
    const source = realpathSync(installed);
    const target = join(destination, "node_modules", name);
    if (name.startsWith("@compaction/")) copyRuntimeFiles(source, target);
    else cpSync(source, target, { recursive: true, dereference: true });
    pending.push(...dependencies(source));
  }
  return destination;
}
