/** The shared EntryStore and preparation-claims contracts (@compaction/transcript/testing) on the Postgres store, against the real server. */
import { describeEntryStoreContract, describePreparationClaimsContract } from "@compaction/transcript/testing";
import type { EntryStore } from "@compaction/transcript";
import { describe, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

if (skipReason === undefined) {
  let database: Promise<string> | undefined;
  const url = () => (database ??= freshDatabase("contract"));
  const sessions = {
    create: async () => openPostgresStore({ connectionString: await url(), create: { cwd: "/work/project" } }),
    reopen: async (store: EntryStore) => openPostgresStore({ connectionString: await url(), session: (store as PostgresStore).sessionId }),
  };
  describeEntryStoreContract("PostgresStore", {
    ...sessions,
    openMissing: async () => openPostgresStore({ connectionString: await url(), session: "0199aaaa-0000-7000-8000-000000000000" }),
  });
  describePreparationClaimsContract("PostgresStore", sessions);
} else {
  describe("EntryStore contract: PostgresStore", () => {
    it.skip(`skipped: ${skipReason}`, () => undefined);
  });
}
