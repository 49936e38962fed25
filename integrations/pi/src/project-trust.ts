/**
 * Whether the project pi runs in may run code through `.compactionrc` (code config files, plugin
 * and preset files or packages inside the project): pi's own project-trust decision.
 *
 * pi (the @earendil-works releases) asks the user before it loads what a folder supplies
 * (`.pi/settings.json`, `.pi/extensions`, ...), and tells extensions with `ctx.isProjectTrusted()`.
 * That answer is also `true` for a folder holding none of those, where pi never asked: a cloned
 * repository with only a `.compactionrc.mjs` would run its code. So a `true` counts only when pi
 * had something to decide (the folder holds what pi guards) or the user saved a decision for the
 * folder (`/trust`, kept in pi's `trust.json`). pi 0.73 (@mariozechner) has no project trust: the
 * project is trusted there, as before.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ExtensionContext } from "./pi-types.js";

/** What pi guards in `<project>/.pi` (pi's trust-manager: TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES). */
const PI_GUARDED = ["settings.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];

/** pi's agent folder: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent` (pi's config: getAgentDir). */
export function piAgentDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env["PI_CODING_AGENT_DIR"];
  if (fromEnv !== undefined && fromEnv !== "") return resolve(fromEnv.startsWith("~") ? join(homedir(), fromEnv.slice(1)) : fromEnv);
  return join(homedir(), ".pi", "agent");
}

export interface ProjectTrust {
  readonly trusted: boolean;
  /** Why, for the warning when project code is not loaded. */
  readonly because: string;
}

/** The decision for `cwd`, from pi's context (see the file comment). */
export function projectTrust(ctx: Pick<ExtensionContext, "cwd"> & { isProjectTrusted?: () => boolean }, cwd: string, agentDir = piAgentDir()): ProjectTrust {
  if (typeof ctx.isProjectTrusted !== "function") {
    return { trusted: true, because: "this pi has no project trust" };
  }
  if (!ctx.isProjectTrusted()) {
    return { trusted: false, because: "pi has not trusted this folder" };
  }
  if (holdsWhatPiGuards(cwd)) return { trusted: true, because: "pi trusts this folder" };
  const saved = savedDecision(join(agentDir, "trust.json"), cwd);
  if (saved === true) return { trusted: true, because: "the folder is trusted in pi's trust.json" };
  return {
    trusted: false,
    because: "pi never asked about this folder, which holds nothing pi guards, and no /trust decision is saved for it",
  };
}

/** Whether pi asks before loading from `cwd` (pi's hasTrustRequiringProjectResources). */
function holdsWhatPiGuards(cwd: string): boolean {
  const home = canonical(homedir());
  let dir = canonical(cwd);
  if (PI_GUARDED.some((name) => existsSync(join(dir, ".pi", name)))) return true;
  for (;;) {
    const skills = join(dir, ".agents", "skills");
    if (skills !== join(home, ".agents", "skills") && existsSync(skills)) return true;
    const parent = dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

/** The nearest saved decision for `cwd` or a folder above it in pi's trust.json, if any. */
function savedDecision(file: string, cwd: string): boolean | undefined {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch {
    return undefined; // no file, or one pi would not read either
  }
  if (typeof data !== "object" || data === null) return undefined;
  const decisions = data as Record<string, unknown>;
  let dir = canonical(cwd);
  for (;;) {
    const decision = decisions[dir];
    if (decision === true || decision === false) return decision;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function canonical(path: string): string {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch {
    return full;
  }
}
