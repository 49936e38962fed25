import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeEntryStoreContract } from "./entry-store-contract.js";
import { createPiFileStore, openPiFileStore } from "./pi-file-store.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-pi-file-store-"));
let count = 0;

describeEntryStoreContract("PiFileStore", {
  create: () => createPiFileStore(join(dir, `s${++count}.jsonl`), { cwd: "/work/project" }),
  reopen: (store) => openPiFileStore(store.location),
  openMissing: () => openPiFileStore(join(dir, "missing.jsonl")),
  cleanup: async () => rmSync(dir, { recursive: true, force: true }),
});
