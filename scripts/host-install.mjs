#!/usr/bin/env node
// Installs the real hosts the host tests run against (OpenClaw, the OpenAI Agents SDK, pi 0.87 and pi 0.73), on demand,
// the way scripts/node-bin.sh fetches a Node: `npm ci` of scripts/hosts/<name>/ (a package.json
// and its package-lock.json, so every transitive version is pinned) into a cache folder,
// ${COMPACTION_HOST_CACHE:-~/.cache/compaction/hosts}/<name>@<version>, once per lockfile; then
// links each package the host's consumers import into their node_modules (a symlink to the
// cache), which is how the tests resolve it. The repository's own `npm ci` never downloads them:
// `npm test` (scripts/test.mjs) runs this first, so CI runs the host tests on a clean machine.
//
//   node scripts/host-install.mjs               every host this Node can run
//   node scripts/host-install.mjs openclaw      one host (fails if this Node cannot run it)
//   node scripts/host-install.mjs --list        each host, its version, where it goes, whether it is there
//
// A host whose `compaction.node` range excludes the running Node is left out of the first form
// with a note (OpenClaw needs Node >= 24.16); nothing but the npm registry is used.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, copyFileSync, symlinkSync, writeFileSync, readlinkSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { nodeSatisfies } from "./host-tests.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const HOSTS_DIR = join(ROOT, "scripts", "hosts");
const CACHE = process.env.COMPACTION_HOST_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "compaction", "hosts");

/** The hosts under scripts/hosts: name, the version of its main package, links, Node range, lockfile hash. */
function hosts() {
  return readdirSync(HOSTS_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const dir = join(HOSTS_DIR, entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const lock = readFileSync(join(dir, "package-lock.json"));
      const main = Object.keys(manifest.dependencies)[0];
      const version = manifest.dependencies[main];
      const hash = createHash("sha256").update(readFileSync(join(dir, "package.json"))).update(lock).digest("hex").slice(0, 16);
      return { name: entry.name, dir, main, version, links: manifest.compaction.links, node: manifest.compaction.node, hash, target: join(CACHE, `${entry.name}@${version}`) };
    });
}

function installed(host) {
  try {
    return readFileSync(join(host.target, ".compaction-host"), "utf8").trim() === host.hash;
  } catch {
    return false;
  }
}

function install(host) {
  if (installed(host)) return false;
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, `.${host.name}-`));
  try {
    copyFileSync(join(host.dir, "package.json"), join(work, "package.json"));
    copyFileSync(join(host.dir, "package-lock.json"), join(work, "package-lock.json"));
    process.stderr.write(`host-install: ${host.main}@${host.version} into ${host.target} (npm ci of scripts/hosts/${host.name})\n`);
    const npm = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: work, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, npm_config_workspaces: "false" } });
    if (npm.status !== 0) throw new Error(`host-install: npm ci for ${host.name} failed (exit ${npm.status ?? npm.signal}); the npm registry must be reachable`);
    writeFileSync(join(work, ".compaction-host"), `${host.hash}\n`);
    rmSync(host.target, { recursive: true, force: true });
    try {
      renameSync(work, host.target);
    } catch (error) {
      // Another run installed the same host meanwhile: theirs will do.
      if (!installed(host)) throw error;
    }
    return true;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Links each package the host's consumers import from their node_modules to the cache. */
function link(host) {
  for (const [consumer, packages] of Object.entries(host.links)) {
    for (const name of packages) {
      const from = join(ROOT, consumer, "node_modules", name);
      const to = join(host.target, "node_modules", name);
      if (!existsSync(to)) throw new Error(`host-install: ${host.name} has no ${name} at ${to}`);
      let current;
      try {
        current = lstatSync(from).isSymbolicLink() ? readlinkSync(from) : "(not a link)";
      } catch {
        current = undefined;
      }
      if (current === to) continue;
      if (current !== undefined) rmSync(from, { recursive: true, force: true });
      mkdirSync(dirname(from), { recursive: true });
      symlinkSync(to, from, "dir");
    }
  }
}

const args = process.argv.slice(2);
const all = hosts();
if (args.includes("--list")) {
  for (const host of all) {
    const state = installed(host) ? "installed" : "not installed";
    const runs = nodeSatisfies(host.node) ? "" : ` (needs Node ${host.node}; this is ${process.versions.node})`;
    console.log(`${host.name}\t${host.main}@${host.version}\t${state}\t${host.target}${runs}`);
  }
  process.exit(0);
}
const unknown = args.filter((name) => !all.some((host) => host.name === name));
if (unknown.length > 0) {
  console.error(`host-install: no host named ${unknown.join(", ")}; the hosts are ${all.map((host) => host.name).join(", ")} (scripts/hosts/)`);
  process.exit(2);
}
const chosen = args.length === 0 ? all : all.filter((host) => args.includes(host.name));
for (const host of chosen) {
  if (!nodeSatisfies(host.node)) {
    const message = `host-install: ${host.name} needs Node ${host.node}; this is Node ${process.versions.node}`;
    if (args.length > 0) {
      console.error(`${message}. Run it with such a Node, e.g. PATH="$(bash scripts/node-bin.sh 24):$PATH" node scripts/host-install.mjs ${host.name}`);
      process.exit(1);
    }
    process.stderr.write(`${message}: not installed (its tests skip on this Node)\n`);
    continue;
  }
  try {
    install(host);
    link(host);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
  const where = Object.keys(host.links).map((consumer) => relative(ROOT, join(ROOT, consumer, "node_modules"))).join(", ");
  process.stderr.write(`host-install: ${host.main}@${host.version} ready (${where} -> ${host.target})\n`);
}
