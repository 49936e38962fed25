/**
 * Helpers for tests of code built on the transcript store (`@compaction/transcript/testing`).
 * The EntryStore contract suite uses vitest (an optional peer dependency of this package).
 */
export { type OpenClawTestSession, writeOpenClawDatabase } from "./openclaw-database.js";
export {
  contractAssistant,
  contractCompaction,
  contractUser,
  describeEntryStoreContract,
  type EntryStoreContractFactory,
} from "../store/entry-store-contract.js";
export { describePreparationClaimsContract } from "../store/preparation-claims-contract.js";
