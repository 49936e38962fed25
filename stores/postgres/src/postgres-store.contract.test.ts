/** The shared EntryStore contract (@compaction/transcript/testing) on the Postgres store, against the real server. */
import { describeEntryStoreContract } from "@compaction/transcript/testing";
import { describe, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

if (skipReason === undefined) {
  let database: Promise<string> | undefined;
  const url = () => (database ??= freshDatabase("contract"));
  describeEntryStoreContract("PostgresStore", {
    create: async () => openPostgresStore({ connectionString: await url(), create: { cwd: "/work/project" } }),
    reopen: async (store) => openPostgresStore({ connectionString: await url(), session: (store as PostgresStore).sessionId }),
    openMissing: async () => openPostgresStore({ connectionString: await url(), session: "0199aaaa-0000-7000-8000-000000000000" }),
  });
} else {
  describe("EntryStore contract: PostgresStore", () => {
    it.skip(`skipped: ${skipReason}`, () => undefined);
  });
}
