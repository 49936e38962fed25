/**
 * The Postgres store's claims on compactions prepared in the background (the rule is
 * @compaction/transcript's preparation-claims.ts), in the `preparation_claims` table: one row per
 * session. A claim is taken in a write transaction that locks the session's row, as every append
 * and compaction does, so a claim and a compaction written by another worker are put in one
 * order; a plain read first lets a worker refused by a live claim go on without that lock.
 * Times are the server's clock (`clock_timestamp()`): workers on machines whose clocks differ
 * agree on when a lease ends.
 */
import { randomUUID } from "node:crypto";
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
} from "@compaction/transcript";
import type pg from "pg";

/** What the claims need of the store that holds them (its connections, transactions and branch). */
export interface PostgresClaimAccess {
  readonly sessionId: string;
  readonly location: string;
  /** The quoted schema holding the tables. */
  readonly schema: string;
  /** Throws the store's closed-store error for `doing` once it was closed. */
  assertOpen(doing: string): void;
  /** Runs `task` with a pooled connection; failures become CompactionErrors about `doing`. */
  withClient<R>(doing: string, task: (client: pg.PoolClient) => Promise<R>): Promise<R>;
  /** Runs `task` in a transaction holding the session row's lock, with the leaf read under it. */
  write<R>(doing: string, task: (client: pg.PoolClient, leafId: string | null) => Promise<R>): Promise<R>;
  /** The leaf now (no lock). */
  leafId(client: pg.ClientBase): Promise<string | null>;
  /** The newest compaction on the branch ending at `leafId`. */
  newestCompactionId(client: pg.ClientBase, leafId: string | null): Promise<string | null>;
}

interface ClaimRow {
  token: string;
  owner: string;
  base_compaction_id: string | null;
  head_entry_id: string | null;
  tokens: string;
  claimed_at: Date;
  expires_at: Date;
  ready_at: Date | null;
  now: Date;
}

const COLUMNS = "token, owner, base_compaction_id, head_entry_id, tokens, claimed_at, expires_at, ready_at, clock_timestamp() AS now";

/** The claims of one Postgres session (`PostgresStore.preparationClaims`). */
export class PostgresPreparationClaims implements PreparationClaims {
  readonly #db: PostgresClaimAccess;

  constructor(access: PostgresClaimAccess) {
    this.#db = access;
  }

  async claim(request: PreparationClaimRequest): Promise<PreparationClaimOutcome> {
    const doing = "claim a background compaction";
    this.#db.assertOpen(doing);
    checkClaimRequest(request, this.#db.location);
    // Read first: a worker that will not prepare (a live claim, or a view that is behind) takes no lock.
    const refused = await this.#db.withClient(doing, async (client) => this.#refusal(client, await this.#db.leafId(client), request));
    if (refused !== null) return refused;
    return this.#db.write(doing, async (client, leafId): Promise<PreparationClaimOutcome> => {
      const again = await this.#refusal(client, leafId, request);
      if (again !== null) return again;
      const rows = (
        await client.query<ClaimRow>(
          `INSERT INTO ${this.#db.schema}.preparation_claims (session_id, token, owner, base_compaction_id, head_entry_id, tokens, claimed_at, expires_at, ready_at)
           VALUES ($1, $2, $3, $4, $5, $6, clock_timestamp(), clock_timestamp() + $7 * interval '1 millisecond', NULL)
           ON CONFLICT (session_id) DO UPDATE SET
             token = EXCLUDED.token, owner = EXCLUDED.owner, base_compaction_id = EXCLUDED.base_compaction_id, head_entry_id = EXCLUDED.head_entry_id,
             tokens = EXCLUDED.tokens, claimed_at = EXCLUDED.claimed_at, expires_at = EXCLUDED.expires_at, ready_at = NULL
           RETURNING ${COLUMNS}`,
          [this.#db.sessionId, randomUUID(), request.owner, request.baseCompactionId, request.headEntryId, Math.round(request.tokens), request.leaseMs],
        )
      ).rows;
      return { claimed: true, claim: claimOf(rows[0] as ClaimRow) };
    });
  }

  async renew(token: string, options: { readonly leaseMs: number; readonly ready?: boolean }): Promise<PreparationClaim | null> {
    const doing = "renew a background compaction claim";
    this.#db.assertOpen(doing);
    checkClaimRenewal(token, options, this.#db.location);
    return this.#db.withClient(doing, async (client) => {
      const rows = (
        await client.query<ClaimRow>(
          `UPDATE ${this.#db.schema}.preparation_claims
              SET expires_at = clock_timestamp() + $3 * interval '1 millisecond',
                  ready_at = CASE WHEN $4 THEN coalesce(ready_at, clock_timestamp()) ELSE ready_at END
            WHERE session_id = $1 AND token = $2
           RETURNING ${COLUMNS}`,
          [this.#db.sessionId, token, options.leaseMs, options.ready === true],
        )
      ).rows;
      return rows[0] === undefined ? null : claimOf(rows[0]);
    });
  }

  async release(token: string): Promise<boolean> {
    const doing = "release a background compaction claim";
    this.#db.assertOpen(doing);
    checkClaimToken(token, this.#db.location);
    return this.#db.withClient(doing, async (client) => {
      const result = await client.query(`DELETE FROM ${this.#db.schema}.preparation_claims WHERE session_id = $1 AND token = $2`, [this.#db.sessionId, token]);
      return (result.rowCount ?? 0) > 0;
    });
  }

  async current(): Promise<PreparationClaimStatus | null> {
    const doing = "read the background compaction claim";
    this.#db.assertOpen(doing);
    return this.#db.withClient(doing, async (client) => {
      const row = await this.#row(client);
      if (row === undefined) return null;
      const newest = await this.#db.newestCompactionId(client, await this.#db.leafId(client));
      return claimStatus(claimOf(row), newest, row.now.getTime());
    });
  }

  /** Why `request` cannot claim now, or null when it can. */
  async #refusal(client: pg.ClientBase, leafId: string | null, request: PreparationClaimRequest): Promise<PreparationClaimOutcome | null> {
    const newest = await this.#db.newestCompactionId(client, leafId);
    const row = newest === request.baseCompactionId ? await this.#row(client) : undefined;
    return claimRefusal(request, newest, row === undefined ? null : claimOf(row), row?.now.getTime() ?? 0);
  }

  async #row(client: pg.ClientBase): Promise<ClaimRow | undefined> {
    return (await client.query<ClaimRow>(`SELECT ${COLUMNS} FROM ${this.#db.schema}.preparation_claims WHERE session_id = $1`, [this.#db.sessionId])).rows[0];
  }
}

function claimOf(row: ClaimRow): PreparationClaim {
  return {
    token: row.token,
    owner: row.owner,
    baseCompactionId: row.base_compaction_id,
    headEntryId: row.head_entry_id,
    tokens: Number(row.tokens),
    claimedAt: row.claimed_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    readyAt: row.ready_at === null ? null : row.ready_at.toISOString(),
  };
}
