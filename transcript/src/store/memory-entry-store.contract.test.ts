import { describeEntryStoreContract } from "./entry-store-contract.js";
import { MemoryEntryStore } from "./memory-entry-store.js";

describeEntryStoreContract("MemoryEntryStore", {
  create: async () => new MemoryEntryStore({ header: { type: "session", version: 3, id: `s-${Math.random().toString(16).slice(2)}`, timestamp: new Date().toISOString(), cwd: "/work/project" } }),
  reopen: async (store) => (store as MemoryEntryStore).handle(),
});
