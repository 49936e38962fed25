/** The SQLite store's schema versions: a database of an older layout is migrated on open, whole or not at all. */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { rejection } from "@compaction/core/testing";
import { contractAssistant, contractCompaction, contractUser } from "./entry-store-contract.js";
import { SQLITE_SCHEMA_VERSION } from "./sqlite-schema.js";
import { openSqliteStore } from "./sqlite-store.js";
import { storeFailpoints } from "./store-failpoints.js";

const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
const dir = mkdtempSync(join(tmpdir(), "compaction-sqlite-schema-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  storeFailpoints.beforeCommit = undefined;
});
let count = 0;

/**
 * A database in version 1's layout holding two sessions with entries and a compaction: written by
 * this store, then taken back to version 1 (version 2 only added the claims table).
 */
async function versionOneDatabase(): Promise<{ file: string; sessions: Record<string, unknown[]> }> {
  const file = join(dir, `v1-${++count}.sqlite`);
  const sessions: Record<string, unknown[]> = {};
  for (const id of ["first", "second"]) {
    const store = await openSqliteStore({ file, session: id, create: { cwd: "/srv" } });
    const written = await store.append([contractUser(`${id} one`), contractAssistant(`${id} two`), contractUser(`${id} three`)]);
    await store.appendCompaction(contractCompaction(written[1]!.id), { newestCompactionId: null });
    sessions[id] = await store.entries();
    await store.close();
  }
  const db = new Database(file);
  db.exec("DROP TABLE compaction_preparation_claims");
  db.prepare("UPDATE compaction_meta SET value = '1' WHERE key = 'schema_version'").run();
  db.close();
  return { file, sessions };
}

function layout(file: string): { version: string; claimsTable: boolean } {
  const db = new Database(file, { readOnly: true });
  try {
    const version = (db.prepare("SELECT value FROM compaction_meta WHERE key = 'schema_version'").get() as { value: string }).value;
    const claimsTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'compaction_preparation_claims'").get() !== undefined;
    return { version, claimsTable };
  } finally {
    db.close();
  }
}

describe("SqliteStore schema versions", () => {
  it("brings a version 1 database to the current version on open, keeping every session and entry, and claims work there", async () => {
    expect(SQLITE_SCHEMA_VERSION).toBe(2);
    const { file, sessions } = await versionOneDatabase();
    expect(layout(file)).toStrictEqual({ version: "1", claimsTable: false });
    const store = await openSqliteStore({ file, session: "first" });
    expect(layout(file)).toStrictEqual({ version: String(SQLITE_SCHEMA_VERSION), claimsTable: true });
    expect(await store.entries()).toStrictEqual(sessions["first"]);
    const branch = await store.branch();
    const outcome = await store.preparationClaims.claim({ owner: "after the upgrade", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 10, leaseMs: 1_000 });
    expect(outcome.claimed).toBe(true);
    await store.close();
    const other = await openSqliteStore({ file, session: "second" });
    expect(await other.entries()).toStrictEqual(sessions["second"]);
    await other.close();
  });

  it("a migration that fails before its commit leaves the database at version 1, whole, and the next open migrates it", async () => {
    const { file, sessions } = await versionOneDatabase();
    storeFailpoints.beforeCommit = (_location, call) => {
      if (call === "prepare the database") throw new Error("the process died here");
    };
    await rejection(openSqliteStore({ file, session: "first" }));
    storeFailpoints.beforeCommit = undefined;
    expect(layout(file)).toStrictEqual({ version: "1", claimsTable: false });
    const store = await openSqliteStore({ file, session: "first" });
    expect(layout(file).version).toBe(String(SQLITE_SCHEMA_VERSION));
    expect(await store.entries()).toStrictEqual(sessions["first"]);
    await store.close();
  });

  it("a schema_version that is not a number: COMPACTION_TRANSCRIPT_CORRUPT naming it, the database unchanged", async () => {
    const { file } = await versionOneDatabase();
    const db = new Database(file);
    db.prepare("UPDATE compaction_meta SET value = 'two' WHERE key = 'schema_version'").run();
    db.close();
    const error = await rejection(openSqliteStore({ file, session: "first" }));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_CORRUPT });
    expect(error.message).toContain('"two"');
    expect(error.message).toContain(file);
    expect(layout(file)).toStrictEqual({ version: "two", claimsTable: false });
  });
});
