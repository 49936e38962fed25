/**
 * `compaction session upgrade`: rewrites a version 1 or 2 pi session file as version 3, as pi
 * does when it opens one, keeping the original beside it (transcript's upgradeSession). The
 * commands that append (`compact`, `autocompact on|off`) upgrade the same way before writing.
 */
import { type BoundaryLoad, CURRENT_SESSION_VERSION, upgradeSession, type UpgradedSession } from "@compaction/transcript";
import { basename } from "node:path";
import type { CommandContext } from "../command-context.js";
import { type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import type { CliIo } from "../io.js";

interface UpgradeOptions extends CommonOptions {
  readonly dryRun?: boolean;
}

/** What `session upgrade --json` prints (and `compact --json` carries as `upgrade`). */
export interface UpgradeReport {
  readonly session: { readonly path: string };
  /** The version the file had. */
  readonly fromVersion: number;
  readonly toVersion: number;
  /** Whether the file was rewritten (false: already version 3, or --dry-run). */
  readonly upgraded: boolean;
  /** Where the original was kept, or null when nothing was written. */
  readonly backupPath: string | null;
}

/** `compaction session upgrade`. */
export const sessionUpgradeCommand = defineCommand({
  name: "upgrade",
  description: "rewrite a version 1 or 2 session file as version 3, as pi does on open, keeping the original as <file>.bak",
  session: true,
  options: [["-n, --dry-run", "say whether it would be upgraded; write nothing"]],
  run: upgrade,
  text: (report, { options, context }) => renderUpgrade(report, options.dryRun === true, context),
});

async function upgrade({ options, session }: CommandScope<UpgradeOptions, undefined>): Promise<UpgradeReport> {
  const { path } = session;
  session.requirePiFormat("upgrade it");
  session.refuseDatabase("upgrade it");
  const fromVersion = session.boundary().version;
  if (fromVersion >= CURRENT_SESSION_VERSION || options.dryRun === true) {
    return { session: { path }, fromVersion, toVersion: Math.max(fromVersion, CURRENT_SESSION_VERSION), upgraded: false, backupPath: null };
  }
  session.assertWholeBranch();
  return reportOf(await upgradeSession(path));
}

function renderUpgrade(report: UpgradeReport, dryRun: boolean, { out: c }: CommandContext): string {
  const { path } = report.session;
  if (report.fromVersion >= CURRENT_SESSION_VERSION) return `${path} is already a version ${report.fromVersion} session file: nothing to upgrade.\n`;
  if (dryRun) {
    return `${path} is a version ${report.fromVersion} session file: it would be rewritten as version ${CURRENT_SESSION_VERSION}, keeping the original as ${path}.bak.\n${c.dim("Dry run: nothing written.")}\n`;
  }
  return `${c.green("Upgraded:")} ${upgradeNotice(report)}\n`;
}

/**
 * Before appending to a pi session file: a version 1 or 2 file is upgraded first (saying so on
 * stderr, and where the original was kept); version 3 is left alone. Returns the upgrade, or null.
 */
export async function upgradeBeforeWriting(path: string, loaded: Pick<BoundaryLoad, "version">, io: CliIo): Promise<UpgradeReport | null> {
  if (loaded.version >= CURRENT_SESSION_VERSION) return null;
  const report = reportOf(await upgradeSession(path));
  if (report.upgraded) io.stderr.write(`compaction: ${upgradeNotice(report)}\n`);
  return report;
}

/** For a dry run of a writing command: the upgrade writing would first do, or null for a version 3 file. */
export function upgradeDryRun(path: string, version: number): UpgradeReport | null {
  if (version >= CURRENT_SESSION_VERSION) return null;
  return { session: { path }, fromVersion: version, toVersion: CURRENT_SESSION_VERSION, upgraded: false, backupPath: null };
}

/** One line saying what writing would first do to the old file. */
export function upgradeDryRunNote(upgrade: UpgradeReport): string {
  return `a version ${upgrade.fromVersion} file: writing would first rewrite it as version ${upgrade.toVersion}, as pi does when it opens it, keeping the original as ${basename(upgrade.session.path)}.bak`;
}

function upgradeNotice(report: UpgradeReport): string {
  return `rewrote ${report.session.path} (a version ${report.fromVersion} session file) as version ${report.toVersion}, as pi does when it opens it; the original is kept at ${report.backupPath}.`;
}

function reportOf(upgraded: UpgradedSession): UpgradeReport {
  return {
    session: { path: upgraded.path },
    fromVersion: upgraded.fromVersion,
    toVersion: Math.max(upgraded.fromVersion, CURRENT_SESSION_VERSION),
    upgraded: upgraded.backupPath !== null,
    backupPath: upgraded.backupPath,
  };
}
