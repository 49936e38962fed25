import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeEntryStoreContract } from "./entry-store-contract.js";
import { openSqliteStore, type SqliteStore } from "./sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-sqlite-store-"));
const file = join(dir, "sessions.sqlite");

describeEntryStoreContract("SqliteStore", {
  create: () => openSqliteStore({ file, create: { cwd: "/work/project" } }),
  reopen: (store) => openSqliteStore({ file, session: (store as SqliteStore).sessionId }),
  openMissing: () => openSqliteStore({ file, session: "0199aaaa-0000-7000-8000-000000000000" }),
  cleanup: async () => rmSync(dir, { recursive: true, force: true }),
});
