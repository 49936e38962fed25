/**
 * `compaction session upgrade`, and `compact --yes` on a version 1 file: the file is rewritten
 * as version 3 the way pi rewrites it on open (pi then builds the same context from it as from
 * its own upgrade), the original is kept beside it, and --dry-run writes nothing.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildContext, readSession } from "@compaction/transcript";
import { FIXTURES_DIR, PI_FIXTURES } from "@compaction/fixtures";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { createSandbox } from "./test-support/cli-sandbox.js";

const SHIPPED = fileURLToPath(new URL("../../examples/sessions/pi-large-session.jsonl", import.meta.url));
const SESSIONS: readonly (readonly [string, string])[] = [
  ["the shipped example", SHIPPED],
  ...PI_FIXTURES.map((name) => [`real fixture ${name}`, join(FIXTURES_DIR, name)] as const),
];

const dir = mkdtempSync(join(tmpdir(), "compaction-upgrade-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
/** A copy of `source` in a folder of its own (pi writes beside the file it opens). */
function copyOf(source: string): string {
  const path = join(dir, `s${++count}.jsonl`);
  copyFileSync(source, path);
  return path;
}
/** The messages pi builds after upgrading its own copy of `source` on open. */
function piOwnUpgrade(source: string): unknown[] {
  const path = copyOf(source);
  return SessionManager.open(path, dir).buildSessionContext().messages;
}

describe("compaction session upgrade", () => {
  for (const [name, source] of SESSIONS) {
    it(`rewrites ${name} as version 3, which pi reads exactly as its own upgrade, keeping the original as .bak`, async () => {
      const sandbox = await createSandbox({ version1: true });
      try {
        const path = copyOf(source);
        const original = readFileSync(path);
        const run = sandbox.run(["session", "upgrade", "--session", path], { NO_COLOR: "1" });
        expect(run.code).toBe(0);
        expect(run.stdout).toContain(`Upgraded: rewrote ${path} (a version 1 session file) as version 3`);
        expect(run.stdout).toContain(`the original is kept at ${path}.bak`);
        expect(readFileSync(`${path}.bak`).equals(original)).toBe(true);
        expect(readSession(path).version).toBe(3);
        const upgraded = readFileSync(path);
        expect(SessionManager.open(path, dir).buildSessionContext().messages).toStrictEqual(piOwnUpgrade(source));
        // pi had nothing left to migrate: it did not rewrite the file.
        expect(readFileSync(path).equals(upgraded)).toBe(true);
      } finally {
        sandbox.remove();
      }
    });
  }

  it("writes nothing with --dry-run and says what it would do; --json reports it", async () => {
    const sandbox = await createSandbox({ version1: true });
    try {
      const before = sandbox.bytes();
      const run = sandbox.run(["session", "upgrade", "--dry-run"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("is a version 1 session file: it would be rewritten as version 3");
      expect(run.stdout).toContain("Dry run: nothing written.");
      expect(sandbox.bytes().equals(before)).toBe(true);
      expect(existsSync(`${sandbox.sessionPath}.bak`)).toBe(false);
      const json = sandbox.run(["session", "upgrade", "--json"]);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toStrictEqual({
        session: { path: sandbox.sessionPath },
        fromVersion: 1,
        toVersion: 3,
        upgraded: true,
        backupPath: `${sandbox.sessionPath}.bak`,
      });
      const again = sandbox.run(["session", "upgrade"], { NO_COLOR: "1" });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("is already a version 3 session file: nothing to upgrade.");
    } finally {
      sandbox.remove();
    }
  });
});

describe("compaction compact on a version 1 file", () => {
  it("--dry-run says the file would be upgraded and writes nothing", async () => {
    const sandbox = await createSandbox({ version1: true });
    try {
      const before = sandbox.bytes();
      const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/\nUpgrade   a version 1 file: writing would first rewrite it as version 3, as pi does when it opens it, keeping the original as [^/\n]+\.jsonl\.bak\nDry run: nothing written\.\n$/);
      const json = JSON.parse(sandbox.run(["compact", "--dry-run", "--json"]).stdout) as { upgrade: unknown };
      expect(json.upgrade).toStrictEqual({ session: { path: sandbox.sessionPath }, fromVersion: 1, toVersion: 3, upgraded: false, backupPath: null });
      expect(sandbox.bytes().equals(before)).toBe(true);
      expect(existsSync(`${sandbox.sessionPath}.bak`)).toBe(false);
    } finally {
      sandbox.remove();
    }
  });

  it("--yes upgrades it (saying so, keeping the original), then appends a compaction pi reads as we do", async () => {
    const sandbox = await createSandbox({ version1: true });
    try {
      const original = sandbox.bytes();
      const run = sandbox.run(["compact", "--yes", "--json"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`the original is kept at ${sandbox.sessionPath}.bak`);
      const report = JSON.parse(run.stdout) as { written: boolean; entryId: string; upgrade: unknown };
      expect(report).toMatchObject({ written: true, upgrade: { fromVersion: 1, toVersion: 3, upgraded: true, backupPath: `${sandbox.sessionPath}.bak` } });
      expect(readFileSync(`${sandbox.sessionPath}.bak`).equals(original)).toBe(true);
      const ours = buildContext(readSession(sandbox.sessionPath).entries);
      expect(ours.compaction?.id).toBe(report.entryId);
      expect(SessionManager.open(sandbox.sessionPath, dir).buildSessionContext().messages).toStrictEqual(ours.messages);
    } finally {
      sandbox.remove();
    }
  });

  it("autocompact off upgrades it the same way before writing the setting", async () => {
    const sandbox = await createSandbox({ version1: true });
    try {
      const run = sandbox.run(["autocompact", "off"], { NO_COLOR: "1" });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain("as version 3, as pi does when it opens it");
      expect(readSession(sandbox.sessionPath).version).toBe(3);
      expect(existsSync(`${sandbox.sessionPath}.bak`)).toBe(true);
    } finally {
      sandbox.remove();
    }
  });
});
