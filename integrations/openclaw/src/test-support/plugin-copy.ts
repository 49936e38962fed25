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
import { dirname, join } from "node:path";

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
 * Where Node finds `name` for a package in `fromDir`: the nearest `node_modules` holding it, up to
 * the repo's; undefined when none does (an optional dependency npm skipped).
 */
function resolveInstalled(name: string, fromDir: string, repoModules: string): string | undefined {
  const repo = dirname(repoModules);
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === repo || dirname(dir) === dir) return undefined;
  }
}

/**
 * Copies the plugin in `pluginDir` to `destination` (see above); `repoModules` is the repo's
 * `node_modules`, where npm hoists dependencies and links the workspace packages. `extra`: packages
 * installed beside the plugin as a user would (`npm install @compaction/plugin-summarizer-openai`
 * in its folder), for a `.compactionrc` that names them. Returns `destination`.
 */
export function copyPluginForInstall(pluginDir: string, repoModules: string, destination: string, extra: readonly string[] = []): string {
  copyRuntimeFiles(pluginDir, destination);
  const copied = new Set<string>();
  const pending = [...dependencies(pluginDir), ...extra].map((name) => ({ name, from: pluginDir }));
  while (pending.length > 0) {
    const { name, from } = pending.pop() as { name: string; from: string };
    if (HOST_PACKAGES.has(name)) continue;
    const installed = resolveInstalled(name, from, repoModules);
    if (installed === undefined) continue;
    const source = realpathSync(installed);
    if (copied.has(source)) continue;
    copied.add(source);
    // One nested in its dependent's node_modules came with the dependent's copy.
    if (installed === join(repoModules, name)) {
      const target = join(destination, "node_modules", name);
      if (name.startsWith("@compaction/")) copyRuntimeFiles(source, target);
      else cpSync(source, target, { recursive: true, dereference: true });
    }
    pending.push(...dependencies(source).map((dependency) => ({ name: dependency, from: source })));
  }
  return destination;
}
