/**
 * The claim a context manager holds, in the database of a session store many workers share, on
 * the compaction it prepares in the background (`EntryStore.preparationClaims`; the rule is in
 * @compaction/transcript's preparation-claims.ts). From claiming it to releasing it:
 *
 * 1. The manager claims before it prepares (`claim`); refused, it does not prepare.
 * 2. While the preparation lives (in flight, or ready and not yet applied) the lease is renewed
 *    every third of it, and at once with `ready` when the summary is written. After each renewal
 *    of a ready preparation the manager is told (`onRenewed`), so it can check the session: the
 *    other workers' appends may have taken it past the threshold, and they wait for this one.
 * 3. It is released as soon as the preparation is gone: applied, dropped, failed, or the manager
 *    disposed (`settle`, `release`). A failed release is left to the lease.
 * 4. A renewal that finds the claim gone (its lease ran out and another worker took it over)
 *    tells the manager (`onLost`), which drops the preparation: the other worker prepares now.
 */
import type { PreparationClaim, PreparationClaimOutcome, PreparationClaimRequest, PreparationClaims } from "@compaction/transcript";

export interface ClaimKeeperOptions<P> {
  /** Who this worker is, as the claim records it. */
  readonly owner: string;
  readonly leaseMs: number;
  /** The preparation the manager holds now (its host loop's), or null. */
  readonly current: () => P | null;
  /** The claim on `preparation` is gone (taken over): drop it. */
  readonly onLost: (preparation: P, why: string) => void;
  /** The claim on the ready `preparation` was renewed: a moment to check the session. */
  readonly onRenewed: (preparation: P) => void;
  /** A renewal or release failed (the database could not be reached): reported, the lease decides. */
  readonly onError: (error: unknown, doing: string) => void;
}

/** The claim one context manager holds on its session's background compaction (see the file's note). */
export class PreparationClaimKeeper<P extends { readonly ready: boolean }> {
  readonly #claims: PreparationClaims;
  readonly #options: ClaimKeeperOptions<P>;
  #held: { claim: PreparationClaim; preparation: P | null } | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  #renewing: Promise<void> | null = null;

  constructor(claims: PreparationClaims, options: ClaimKeeperOptions<P>) {
    this.#claims = claims;
    this.#options = options;
  }

  /** The claim held now, or null. */
  get held(): PreparationClaim | null {
    return this.#held?.claim ?? null;
  }

  /** Claims the preparation `request` describes (releasing a claim still held first); on success the claim is held, for `hold`. */
  async claim(request: Omit<PreparationClaimRequest, "owner" | "leaseMs">): Promise<PreparationClaimOutcome> {
    await this.release();
    const outcome = await this.#claims.claim({ ...request, owner: this.#options.owner, leaseMs: this.#options.leaseMs });
    if (outcome.claimed) this.#held = { claim: outcome.claim, preparation: null };
    return outcome;
  }

  /** Binds the claim just taken to the preparation it is for, and starts renewing it. */
  hold(preparation: P): void {
    if (this.#held === null) return;
    this.#held.preparation = preparation;
    clearInterval(this.#timer);
    this.#timer = setInterval(() => void this.#tick(), Math.max(1, Math.floor(this.#options.leaseMs / 3)));
    // A worker's timer must not keep its process alive (dispose releases the claim; a crash leaves it to the lease).
    this.#timer.unref?.();
  }

  /** The preparation is ready: renews now with `ready`, so the claim says so and the manager checks the session. */
  ready(preparation: P): void {
    if (this.#held?.preparation !== preparation) return;
    void (async () => {
      await this.#renewing;
      await this.#tick();
    })();
  }

  /** Releases the claim when the preparation it was for is no longer the manager's (applied, dropped, failed). */
  async settle(): Promise<void> {
    const held = this.#held;
    if (held === null || (held.preparation !== null && held.preparation === this.#options.current())) return;
    await this.release();
  }

  /** Releases the claim held, if any (waiting for a renewal under way). */
  async release(): Promise<void> {
    const held = this.#held;
    if (held === null) return;
    this.#held = null;
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#renewing;
    try {
      await this.#claims.release(held.claim.token);
    } catch (error) {
      this.#options.onError(error, "release the background compaction claim");
    }
  }

  async #tick(): Promise<void> {
    if (this.#renewing !== null) return;
    const held = this.#held;
    if (held === null) return;
    const preparation = held.preparation;
    if (preparation === null || preparation !== this.#options.current()) {
      await this.release();
      return;
    }
    const ready = preparation.ready;
    this.#renewing = (async () => {
      try {
        const renewed = await this.#claims.renew(held.claim.token, { leaseMs: this.#options.leaseMs, ready });
        if (this.#held !== held) return;
        if (renewed === null) {
          this.#held = null;
          clearInterval(this.#timer);
          this.#timer = undefined;
          this.#options.onLost(preparation, `its claim in the session store was taken over by another worker after its lease (${this.#options.leaseMs} ms) ran out unrenewed`);
          return;
        }
        held.claim = renewed;
        if (ready) this.#options.onRenewed(preparation);
      } catch (error) {
        this.#options.onError(error, "renew the background compaction claim");
      } finally {
        this.#renewing = null;
      }
    })();
    await this.#renewing;
  }
}
