/**
 * One compaction prepared in the background per session, claimed in the database the session
 * lives in (the SQLite and Postgres stores), so that of the workers sharing a session only one
 * pays for the model summary the next compaction needs. The rule, which every store that has
 * `EntryStore.preparationClaims` keeps:
 *
 * 1. **One claim per session**, recorded with the compaction the preparation starts from (the
 *    branch's newest compaction, `baseCompactionId`: the next compaction after it is what is
 *    prepared), the entry its snapshot ends at and its size, who holds it, and its lease.
 * 2. **Claimed in one transaction**: under the session's write lock the store checks that
 *    `baseCompactionId` is still the branch's newest compaction (else `moved`: the worker's view
 *    is behind and it must read the branch again), then takes the claim only when none is there
 *    or the one there no longer counts (below); else `held`, naming the holder.
 * 3. **A claim stops counting** when its lease ran out without being renewed (`expired`: its
 *    worker died or hangs, so a crashed worker never blocks the session for longer than one
 *    lease) or when its base is no longer the newest compaction (`stale`: a compaction was
 *    written since, by its holder or anyone, so what it prepares no longer applies).
 * 4. **Renewed** by its holder while the preparation lives (with `ready` once its summary is
 *    written), **released** by its holder when the preparation is applied, dropped or failed; a
 *    renewal or release with a token that no longer holds the claim changes nothing and says so.
 * 5. Claims are not entries: they never change the session's `version()`, its entries or branch,
 *    so other workers do not read the branch again because of one.
 *
 * Times are the database's clock (the store's own for SQLite, one machine; the server's for
 * Postgres, whose workers may run on machines whose clocks differ).
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

/** How long a claim lasts unless renewed, in ms, where the host sets none: its holder renews it every third of this. */
export const DEFAULT_CLAIM_LEASE_MS = 60_000;

/** The longest lease a claim may ask for: a day (a worker that hangs longer must not block its session). */
export const MAX_CLAIM_LEASE_MS = 24 * 60 * 60_000;

/** What a worker asks for when it is about to prepare a compaction in the background. */
export interface PreparationClaimRequest {
  /** Who prepares, for `compaction context status` (a worker's name; the context manager's default is `<host> pid <pid>`). */
  readonly owner: string;
  /** The branch's newest compaction the preparation starts from, as the worker last read it (null: none yet). */
  readonly baseCompactionId: string | null;
  /** The entry the preparation's snapshot ends at (the branch's head as the worker read it), or null for an empty branch. */
  readonly headEntryId: string | null;
  /** The context's size the preparation starts from, as the provider counts it. */
  readonly tokens: number;
  /** How long the claim lasts unless renewed, in ms (1 to `MAX_CLAIM_LEASE_MS`). */
  readonly leaseMs: number;
}

/** A claim as the store records it. */
export interface PreparationClaim {
  /** This claim's own id: renewals and the release name it, so a claim taken over is never renewed or released by its old holder. */
  readonly token: string;
  readonly owner: string;
  readonly baseCompactionId: string | null;
  readonly headEntryId: string | null;
  readonly tokens: number;
  /** When it was claimed, and when its lease ends unless renewed (ISO 8601, the database's clock). */
  readonly claimedAt: string;
  readonly expiresAt: string;
  /** When its holder said the preparation was ready to apply, or null while it is being written. */
  readonly readyAt: string | null;
}

/** Whether a claim counts (see the file's rule): `live`, `expired` (its lease ran out), `stale` (a compaction was written since). */
export type PreparationClaimState = "live" | "expired" | "stale";

/** A claim read back, with what follows from it now (by the database's clock). */
export interface PreparationClaimStatus extends PreparationClaim {
  readonly state: PreparationClaimState;
  /** Since it was claimed, in ms. */
  readonly ageMs: number;
  /** Until its lease ends, in ms; negative once it has. */
  readonly expiresInMs: number;
}

/** What `claim` did. */
export type PreparationClaimOutcome =
  /** The worker holds the claim: it prepares. */
  | { readonly claimed: true; readonly claim: PreparationClaim }
  /** Another worker's claim counts: this one does not prepare. */
  | { readonly claimed: false; readonly reason: "held"; readonly holder: PreparationClaimStatus }
  /** The branch's newest compaction is not the request's base: the worker must read the branch again (nothing was claimed). */
  | { readonly claimed: false; readonly reason: "moved"; readonly newestCompactionId: string | null };

/** The claims of one session, as a store that keeps them in its database has them (`EntryStore.preparationClaims`). */
export interface PreparationClaims {
  /** Takes the session's claim for a preparation from `request.baseCompactionId`, when no other counts (see the file's rule). */
  claim(request: PreparationClaimRequest): Promise<PreparationClaimOutcome>;
  /**
   * Extends the lease of the claim `token` by `leaseMs` from now, and with `ready` records that
   * its preparation is ready to apply; the claim as it is now, or null when `token` no longer
   * holds the session's claim (released, or taken over once its lease ran out).
   */
  renew(token: string, options: { readonly leaseMs: number; readonly ready?: boolean }): Promise<PreparationClaim | null>;
  /** Removes the claim `token`; false (nothing changed) when it no longer holds the session's claim. */
  release(token: string): Promise<boolean>;
  /** The session's claim with its state now, or null when there is none. */
  current(): Promise<PreparationClaimStatus | null>;
}

/**
 * Why `request` cannot claim now, or null when it can, from what the store read in its
 * transaction: the branch's newest compaction id, the session's claim (or null) and the
 * database's clock. The rule is the file's: a branch that moved refuses first, then a live claim.
 */
export function claimRefusal(
  request: PreparationClaimRequest,
  newestCompactionId: string | null,
  existing: PreparationClaim | null,
  nowMs: number,
): PreparationClaimOutcome | null {
  if (newestCompactionId !== request.baseCompactionId) return { claimed: false, reason: "moved", newestCompactionId };
  if (existing === null) return null;
  const status = claimStatus(existing, newestCompactionId, nowMs);
  return status.state === "live" ? { claimed: false, reason: "held", holder: status } : null;
}

/**
 * Checks a claim request's fields: a CompactionError (INPUT_INVALID) naming each wrong field and
 * the session's `location` otherwise, so nothing is claimed.
 */
export function checkClaimRequest(request: PreparationClaimRequest, location: string): void {
  const problems: string[] = [];
  if (typeof request !== "object" || request === null) {
    problems.push(`the request is ${String(request)}`);
  } else {
    if (typeof request.owner !== "string" || request.owner.trim() === "") problems.push(`\`owner\` must be a non-empty string (found ${JSON.stringify(request.owner)})`);
    if (request.baseCompactionId !== null && (typeof request.baseCompactionId !== "string" || request.baseCompactionId === "")) {
      problems.push(`\`baseCompactionId\` must be a compaction entry's id or null (found ${JSON.stringify(request.baseCompactionId)})`);
    }
    if (request.headEntryId !== null && (typeof request.headEntryId !== "string" || request.headEntryId === "")) {
      problems.push(`\`headEntryId\` must be an entry id or null (found ${JSON.stringify(request.headEntryId)})`);
    }
    if (typeof request.tokens !== "number" || !Number.isFinite(request.tokens) || request.tokens < 0) problems.push(`\`tokens\` must be a number of tokens of at least 0 (found ${String(request.tokens)})`);
    const lease = leaseProblem(request.leaseMs);
    if (lease !== null) problems.push(lease);
  }
  if (problems.length > 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot claim a background compaction of ${location}: ${problems.join("; ")}.`, {
      file: location,
      hint: "Pass { owner, baseCompactionId, headEntryId, tokens, leaseMs } as the branch was read; nothing was claimed.",
    });
  }
}

/** Checks a renewal's token and lease (see `checkClaimRequest`). */
export function checkClaimRenewal(token: string, options: { readonly leaseMs: number; readonly ready?: boolean }, location: string): void {
  const problems: string[] = [];
  const tokenWrong = tokenProblem(token);
  if (tokenWrong !== null) problems.push(tokenWrong);
  if (typeof options !== "object" || options === null) problems.push(`the options are ${String(options)}`);
  else {
    const lease = leaseProblem(options.leaseMs);
    if (lease !== null) problems.push(lease);
    if (options.ready !== undefined && typeof options.ready !== "boolean") problems.push(`\`ready\` must be true or false (found ${JSON.stringify(options.ready)})`);
  }
  if (problems.length > 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot renew the background compaction claim of ${location}: ${problems.join("; ")}.`, {
      file: location,
      hint: "Pass the token `claim` returned and { leaseMs }; nothing was changed.",
    });
  }
}

/** Checks a release's token (see `checkClaimRequest`). */
export function checkClaimToken(token: string, location: string): void {
  const problem = tokenProblem(token);
  if (problem === null) return;
  throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot release the background compaction claim of ${location}: ${problem}.`, {
    file: location,
    hint: "Pass the token `claim` returned; nothing was changed.",
  });
}

/**
 * Whether a recorded claim counts now (rule 3): `expired` once its lease ended (`expiresAtMs` at
 * or before `nowMs`), `stale` once the branch's newest compaction is not its base, else `live`.
 */
export function claimState(claim: { readonly baseCompactionId: string | null; readonly expiresAtMs: number }, newestCompactionId: string | null, nowMs: number): PreparationClaimState {
  if (claim.expiresAtMs <= nowMs) return "expired";
  if (claim.baseCompactionId !== newestCompactionId) return "stale";
  return "live";
}

/** A recorded claim with its state and ages at `nowMs` (the database's clock). */
export function claimStatus(claim: PreparationClaim, newestCompactionId: string | null, nowMs: number): PreparationClaimStatus {
  const claimedAtMs = Date.parse(claim.claimedAt);
  const expiresAtMs = Date.parse(claim.expiresAt);
  return {
    ...claim,
    state: claimState({ baseCompactionId: claim.baseCompactionId, expiresAtMs }, newestCompactionId, nowMs),
    ageMs: Math.max(0, nowMs - claimedAtMs),
    expiresInMs: expiresAtMs - nowMs,
  };
}

function leaseProblem(leaseMs: unknown): string | null {
  if (typeof leaseMs === "number" && Number.isInteger(leaseMs) && leaseMs >= 1 && leaseMs <= MAX_CLAIM_LEASE_MS) return null;
  return `\`leaseMs\` must be a whole number of ms from 1 to ${MAX_CLAIM_LEASE_MS} (found ${String(leaseMs)})`;
}

function tokenProblem(token: unknown): string | null {
  return typeof token === "string" && token !== "" ? null : `the token must be the non-empty string \`claim\` returned (found ${JSON.stringify(token) ?? String(token)})`;
}
