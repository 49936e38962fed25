/**
 * The public workspace packages as `npm pack` makes them, for the tests of what gets published
 * (test/packed-packages.test.ts, test/packed-install.test.ts). The workspaces are the root
 * package.json's (globs expanded by npm itself, `npm query .workspace`), so a package added later
 * is packed and checked with no change here. Packing needs the packages built (`npm run build`):
 * `dist` is what the tarballs carry.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { npm } from "./run-async.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

export interface Workspace {
  /** The folder, relative to the repository root (`plugins/rolling`). */
  readonly dir: string;
  readonly name: string;
  readonly private: boolean;
}

export interface PackedPackage {
  readonly name: string;
  readonly dir: string;
  readonly version: string;
  /** The tarball's absolute path. */
  readonly tarball: string;
}

const QUERY = ["query", ".workspace", "--json"] as const;

/** Every workspace package of the root package.json, private ones included. */
export function workspaces(): Workspace[] {
  return workspacesOf(execFileSync("npm", QUERY, { cwd: ROOT, encoding: "utf8" }));
}

function workspacesOf(queried: string): Workspace[] {
  const found = JSON.parse(queried) as { location: string }[];
  return found.map(({ location }) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, location, "package.json"), "utf8")) as { name: string; private?: boolean };
    return { dir: location, name: pkg.name, private: pkg.private === true };
  });
}

/** The workspace packages that are published (not `private`). */
export function publicWorkspaces(): Workspace[] {
  return workspaces().filter((workspace) => !workspace.private);
}

/**
 * Packs every public workspace into a new temporary folder, in one `npm pack` (scripts not run:
 * nothing a package runs when packed may change what it ships). `remove()` deletes the folder.
 */
export function packPublicWorkspaces(): PackedWorkspaces {
  const published = publicWorkspaces();
  const dir = mkdtempSync(join(tmpdir(), "compaction-packed-"));
  const out = execFileSync("npm", packArgs(dir, published), {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  return packedOf(out, dir, published);
}

/**
 * `packPublicWorkspaces` without blocking the event loop (see run-async.ts): each npm command is
 * killed after `timeoutMs`, failing with an error that names it.
 */
export async function packPublicWorkspacesAsync(timeoutMs: number): Promise<PackedWorkspaces> {
  const published = workspacesOf(await npm(QUERY, { cwd: ROOT, timeoutMs })).filter((workspace) => !workspace.private);
  const dir = mkdtempSync(join(tmpdir(), "compaction-packed-"));
  try {
    return packedOf(await npm(packArgs(dir, published), { cwd: ROOT, timeoutMs }), dir, published);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export interface PackedWorkspaces {
  readonly dir: string;
  readonly packages: PackedPackage[];
  readonly remove: () => void;
}

function packArgs(dir: string, published: readonly Workspace[]): string[] {
  return ["pack", "--json", "--ignore-scripts", "--pack-destination", dir, ...published.flatMap(({ name }) => ["-w", name])];
}

/** The tarballs `npm pack --json` reports (`out`), checked against the workspaces it was asked to pack. */
function packedOf(out: string, dir: string, published: readonly Workspace[]): PackedWorkspaces {
  const entries = JSON.parse(out) as { name: string; version: string; filename: string }[];
  const packages = entries.map((entry) => {
    const workspace = published.find(({ name }) => name === entry.name);
    if (workspace === undefined) throw new Error(`npm pack made ${entry.filename} for ${entry.name}, which is no public workspace`);
    return { name: entry.name, dir: workspace.dir, version: entry.version, tarball: join(dir, entry.filename) };
  });
  const missing = published.filter(({ name }) => !packages.some((packed) => packed.name === name)).map(({ name }) => name);
  if (missing.length > 0) throw new Error(`npm pack made no tarball for ${missing.join(", ")}`);
  return { dir, packages, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
