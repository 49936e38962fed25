/**
 * What `context status` says about the compaction being prepared in the background: where the
 * session's store records it, that is a session in SQLite or Postgres, whose workers claim the
 * one compaction they prepare in the database (`EntryStore.preparationClaims`). A pi session
 * file records none: a preparation there lives in the memory of the host preparing it.
 */
import type { PreparationClaimStatus } from "@compaction/transcript";
import { type DatabaseSession, openDatabaseStore } from "./database-target.js";
import { type Colors, formatAge, formatTokens } from "./output.js";

/** A claimed preparation, as `context status` reports it. */
export interface PreparationView {
  /**
   * `preparing`: its summary is being written; `ready`: written, to be applied at the threshold
   * with what was appended since; `abandoned`: its lease ran out unrenewed (its worker stopped),
   * the next worker past the prepare mark takes it over; `stale`: a compaction was written since,
   * so its worker drops it.
   */
  readonly state: "preparing" | "ready" | "abandoned" | "stale";
  /** The worker preparing it (its `worker` option, or `<host> pid <pid>`). */
  readonly owner: string;
  /** When it was claimed (the database's clock), and how long ago. */
  readonly startedAt: string;
  readonly ageMs: number;
  /** When its summary was ready, or null. */
  readonly readyAt: string | null;
  /** The context's size it compacts, as the provider counts it. */
  readonly tokens: number;
  /** The compaction it follows (null: the session's first), and the entry its snapshot ends at. */
  readonly baseCompactionId: string | null;
  readonly headEntryId: string | null;
  /** Until its lease ends unless renewed, in ms; negative once it has. */
  readonly leaseExpiresInMs: number;
}

export interface BackgroundStatus {
  /** Whether the session's store records compactions prepared in the background (a session in a database). */
  readonly recorded: boolean;
  /** The one claimed in the database, or null when none is (or the store records none). */
  readonly preparation: PreparationView | null;
}

/** The background compaction the database of `database` records for the session; not recorded for a file (`database` undefined). */
export async function backgroundStatus(database: DatabaseSession | undefined): Promise<BackgroundStatus> {
  if (database === undefined) return { recorded: false, preparation: null };
  const store = await openDatabaseStore(database.location);
  try {
    const claims = store.preparationClaims;
    if (claims === undefined) return { recorded: false, preparation: null };
    const claim = await claims.current();
    return { recorded: true, preparation: claim === null ? null : viewOf(claim) };
  } finally {
    await store.close();
  }
}

function viewOf(claim: PreparationClaimStatus): PreparationView {
  const state = claim.state === "expired" ? "abandoned" : claim.state === "stale" ? "stale" : claim.readyAt === null ? "preparing" : "ready";
  return {
    state,
    owner: claim.owner,
    startedAt: claim.claimedAt,
    ageMs: claim.ageMs,
    readyAt: claim.readyAt,
    tokens: claim.tokens,
    baseCompactionId: claim.baseCompactionId,
    headEntryId: claim.headEntryId,
    leaseExpiresInMs: claim.expiresInMs,
  };
}

/** The `Background` line of `context status`, or null when the store records no preparations. */
export function backgroundLine(status: BackgroundStatus, c: Colors): string | null {
  if (!status.recorded) return null;
  const p = status.preparation;
  if (p === null) return "none being prepared";
  const started = `${formatAge(p.ageMs)} (at ${formatTokens(p.tokens)} tokens)`;
  switch (p.state) {
    case "preparing":
      return `${c.cyan("preparing")} by ${p.owner}, started ${started}`;
    case "ready": {
      const readyAgo = p.ageMs - (Date.parse(p.readyAt as string) - Date.parse(p.startedAt));
      return `${c.green("ready")}, prepared by ${p.owner}, started ${started}, ready ${formatAge(readyAgo)}: applied at the threshold`;
    }
    case "abandoned":
      return `${c.yellow("abandoned")}: claimed by ${p.owner} ${started}, its lease ran out ${formatAge(-p.leaseExpiresInMs)}; the next worker past the prepare mark takes it over`;
    case "stale":
      return `${c.yellow("stale")}: claimed by ${p.owner} ${started}, before a compaction written since; its worker drops it`;
  }
}
