/** The Postgres store's table versions against the real server: a database of an older version is migrated on open, whole, keeping every row. */
import type { NewEntry } from "@compaction/transcript";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore, SCHEMA_VERSION } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

function user(text: string): NewEntry {
  return { type: "message", message: { role: "user", content: text, timestamp: 1 } };
}

describe.skipIf(skipReason !== undefined)(`Postgres store table versions${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`, () => {
  let url = "";
  let admin: pg.Client;
  const opened: PostgresStore[] = [];

  beforeAll(async () => {
    url = await freshDatabase("schema");
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await admin?.end();
  });

  /** Sessions written in `schema`, whose tables are then taken back to version 1 (version 2 only added the claims table). */
  async function versionOne(schema: string): Promise<Record<string, unknown[]>> {
    const written: Record<string, unknown[]> = {};
    for (const id of ["first", "second"]) {
      const store = await openPostgresStore({ connectionString: url, session: id, create: { cwd: "/srv" }, schema });
      const entries = await store.append([user(`${id} one`), user(`${id} two`), user(`${id} three`)]);
      await store.appendCompaction({ summary: "so far", firstKeptEntryId: entries[1]!.id, tokensBefore: 10, details: { strategy: "test" } as never }, { newestCompactionId: null });
      written[id] = await store.entries();
      await store.close();
    }
    await admin.query(`DROP TABLE ${schema}.preparation_claims`);
    await admin.query(`UPDATE ${schema}.schema_version SET version = 1`);
    return written;
  }

  async function layout(schema: string): Promise<{ version: number; claimsTable: boolean }> {
    const version = (await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_version`)).rows[0]?.version ?? -1;
    const table = (await admin.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [`${schema}.preparation_claims`])).rows[0]?.found ?? null;
    return { version, claimsTable: table !== null };
  }

  it("brings version 1 tables to the current version on open, keeping every session and entry, and claims work there", async () => {
    expect(SCHEMA_VERSION).toBe(2);
    const written = await versionOne("upgraded");
    expect(await layout("upgraded")).toStrictEqual({ version: 1, claimsTable: false });
    // Many processes open at once after an upgrade: the migration runs once.
    const stores = await Promise.all(["first", "second", "first"].map((session) => openPostgresStore({ connectionString: url, session, schema: "upgraded" })));
    opened.push(...stores);
    expect(await layout("upgraded")).toStrictEqual({ version: SCHEMA_VERSION, claimsTable: true });
    expect(await stores[0]!.entries()).toStrictEqual(written["first"]);
    expect(await stores[1]!.entries()).toStrictEqual(written["second"]);
    const branch = await stores[0]!.branch();
    const claim = await stores[0]!.preparationClaims.claim({ owner: "after the upgrade", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 10, leaseMs: 60_000 });
    expect(claim.claimed).toBe(true);
    expect(await stores[2]!.preparationClaims.current()).toMatchObject({ owner: "after the upgrade", state: "live" });
  });

  it("a migration that fails leaves the tables at version 1, every row kept, and the next open migrates them", async () => {
    const written = await versionOne("blocked");
    // A table in the way makes the migration's CREATE TABLE fail after its first statements ran.
    await admin.query("CREATE TABLE blocked.preparation_claims (in_the_way int)");
    await expect(openPostgresStore({ connectionString: url, session: "first", schema: "blocked" })).rejects.toThrow(/preparation_claims/);
    expect((await admin.query<{ version: number }>("SELECT version FROM blocked.schema_version")).rows).toEqual([{ version: 1 }]);
    await admin.query("DROP TABLE blocked.preparation_claims");
    const store = await openPostgresStore({ connectionString: url, session: "first", schema: "blocked" });
    opened.push(store);
    expect(await layout("blocked")).toStrictEqual({ version: SCHEMA_VERSION, claimsTable: true });
    expect(await store.entries()).toStrictEqual(written["first"]);
  });
});
