import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { describeEntryStoreContract, type EntryStoreContractFactory } from "./entry-store-contract.js";
import { describePreparationClaimsContract } from "./preparation-claims-contract.js";
import { openSqliteStore, type SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-sqlite-store-"));
const file = join(dir, "sessions.sqlite");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sessions: EntryStoreContractFactory = {
  create: () => openSqliteStore({ file, create: { cwd: "/work/project" } }),
  reopen: (store) => openSqliteStore({ file, session: (store as SqliteStore).sessionId }),
};

describeEntryStoreContract("SqliteStore", {
  ...sessions,
  openMissing: () => openSqliteStore({ file, session: "0199aaaa-0000-7000-8000-000000000000" }),
});
describePreparationClaimsContract("SqliteStore", sessions);
