/**
 * The SQLite store's claims on compactions prepared in the background (the rule is in
 * preparation-claims.ts), in the `compaction_preparation_claims` table: one row per session.
 * A claim is taken in one `BEGIN IMMEDIATE` transaction (the database's write lock, which every
 * append and compaction of every process also takes), after a plain read that lets a worker
 * refused by a live claim go on without waiting for that lock. Times are this machine's clock,
 * which every process sharing the database file reads.
 */
import { randomUUID } from "node:crypto";
import type { StatementSync } from "node:sqlite";
import {
  checkClaimRenewal,
  checkClaimRequest,
  checkClaimToken,
  claimRefusal,
  claimStatus,
  type PreparationClaim,
  type PreparationClaimOutcome,
  type PreparationClaimRequest,
  type PreparationClaims,
  type PreparationClaimStatus,
} from "./preparation-claims.js";

/** What the claims need of the store that holds them (its statements, transactions and branch). */
export interface SqliteClaimAccess {
  readonly sessionId: string;
  readonly location: string;
  /** Throws the store's closed-store error for `call` once it was closed. */
  assertOpen(call: string): void;
  /** A prepared statement (cached by the store), failing once the store is closed. */
  sql(sql: string, call: string): StatementSync;
  /** Runs `task` in a read transaction. */
  read<R>(task: () => R): R;
  /** Runs `task` in a `BEGIN IMMEDIATE` transaction, all of it or none. */
  write<R>(call: string, task: () => R): R;
  /** The branch's newest compaction now (inside a transaction). */
  newestCompactionId(): string | null;
}

type Row = Record<string, unknown>;

const SELECT_SQL = "SELECT token, owner, base_compaction_id, head_entry_id, tokens, claimed_at, expires_at, ready_at FROM compaction_preparation_claims WHERE session_id = ?";

const UPSERT_SQL = `
INSERT INTO compaction_preparation_claims (session_id, token, owner, base_compaction_id, head_entry_id, tokens, claimed_at, expires_at, ready_at)
VALUES (:session, :token, :owner, :base, :head, :tokens, :claimed, :expires, NULL)
ON CONFLICT (session_id) DO UPDATE SET
  token = excluded.token, owner = excluded.owner, base_compaction_id = excluded.base_compaction_id, head_entry_id = excluded.head_entry_id,
  tokens = excluded.tokens, claimed_at = excluded.claimed_at, expires_at = excluded.expires_at, ready_at = NULL`;

const RENEW_SQL = `
UPDATE compaction_preparation_claims
SET expires_at = :expires, ready_at = CASE WHEN :ready = 1 THEN coalesce(ready_at, :now) ELSE ready_at END
WHERE session_id = :session AND token = :token
RETURNING token, owner, base_compaction_id, head_entry_id, tokens, claimed_at, expires_at, ready_at`;

const RELEASE_SQL = "DELETE FROM compaction_preparation_claims WHERE session_id = ? AND token = ?";

/** The claims of one SQLite session (`SqliteStore.preparationClaims`). */
export class SqlitePreparationClaims implements PreparationClaims {
  readonly #db: SqliteClaimAccess;

  constructor(access: SqliteClaimAccess) {
    this.#db = access;
  }

  async claim(request: PreparationClaimRequest): Promise<PreparationClaimOutcome> {
    this.#db.assertOpen("claim a background compaction");
    checkClaimRequest(request, this.#db.location);
    // Read first: a worker that will not prepare (a live claim, or a view that is behind) takes no write lock.
    const refused = this.#db.read(() => this.#refusal(request));
    if (refused !== null) return refused;
    return this.#db.write("claim a background compaction", (): PreparationClaimOutcome => {
      const again = this.#refusal(request);
      if (again !== null) return again;
      const now = Date.now();
      const claim: PreparationClaim = {
        token: randomUUID(),
        owner: request.owner,
        baseCompactionId: request.baseCompactionId,
        headEntryId: request.headEntryId,
        tokens: Math.round(request.tokens),
        claimedAt: new Date(now).toISOString(),
        expiresAt: new Date(now + request.leaseMs).toISOString(),
        readyAt: null,
      };
      this.#db.sql(UPSERT_SQL, "claim a background compaction").run({
        session: this.#db.sessionId,
        token: claim.token,
        owner: claim.owner,
        base: claim.baseCompactionId,
        head: claim.headEntryId,
        tokens: claim.tokens,
        claimed: now,
        expires: now + request.leaseMs,
      });
      return { claimed: true, claim };
    });
  }

  async renew(token: string, options: { readonly leaseMs: number; readonly ready?: boolean }): Promise<PreparationClaim | null> {
    this.#db.assertOpen("renew a background compaction claim");
    checkClaimRenewal(token, options, this.#db.location);
    return this.#db.write("renew a background compaction claim", () => {
      const now = Date.now();
      const row = this.#db.sql(RENEW_SQL, "renew a background compaction claim").get({
        session: this.#db.sessionId,
        token,
        expires: now + options.leaseMs,
        ready: options.ready === true ? 1 : 0,
        now,
      }) as Row | undefined;
      return row === undefined ? null : claimOf(row);
    });
  }

  async release(token: string): Promise<boolean> {
    this.#db.assertOpen("release a background compaction claim");
    checkClaimToken(token, this.#db.location);
    return this.#db.write("release a background compaction claim", () => {
      const result = this.#db.sql(RELEASE_SQL, "release a background compaction claim").run(this.#db.sessionId, token);
      return Number(result.changes) > 0;
    });
  }

  async current(): Promise<PreparationClaimStatus | null> {
    this.#db.assertOpen("read the background compaction claim");
    const found = this.#db.sql(SELECT_SQL, "read the background compaction claim");
    return this.#db.read(() => {
      const row = found.get(this.#db.sessionId) as Row | undefined;
      if (row === undefined) return null;
      return claimStatus(claimOf(row), this.#db.newestCompactionId(), Date.now());
    });
  }

  /** Why `request` cannot claim now (inside a transaction), or null when it can. */
  #refusal(request: PreparationClaimRequest): PreparationClaimOutcome | null {
    const newest = this.#db.newestCompactionId();
    const there = newest === request.baseCompactionId ? this.#row("claim a background compaction") : null;
    return claimRefusal(request, newest, there, Date.now());
  }

  #row(call: string): PreparationClaim | null {
    const row = this.#db.sql(SELECT_SQL, call).get(this.#db.sessionId) as Row | undefined;
    return row === undefined ? null : claimOf(row);
  }
}

function claimOf(row: Row): PreparationClaim {
  const ready = row["ready_at"];
  return {
    token: row["token"] as string,
    owner: row["owner"] as string,
    baseCompactionId: (row["base_compaction_id"] as string | null) ?? null,
    headEntryId: (row["head_entry_id"] as string | null) ?? null,
    tokens: Number(row["tokens"]),
    claimedAt: new Date(Number(row["claimed_at"])).toISOString(),
    expiresAt: new Date(Number(row["expires_at"])).toISOString(),
    readyAt: ready === null || ready === undefined ? null : new Date(Number(ready)).toISOString(),
  };
}
