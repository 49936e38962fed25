/**
 * The rule of `EntryStore.preparationClaims` (preparation-claims.ts) as a vitest suite a store
 * that has claims runs against itself (`@compaction/transcript/testing`), with the factory of the
 * EntryStore contract: one claim per session and base, refused to a second worker while it
 * counts, taken over once its lease ran out or a compaction was written since, renewed and
 * released only by its token, never a change of the session's version, and the errors.
 */
import { afterAll, describe, expect, it } from "vitest";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { contractAssistant, contractCompaction, contractUser, type EntryStoreContractFactory } from "./entry-store-contract.js";
import type { EntryStore } from "./entry-store.js";
import type { PreparationClaimOutcome, PreparationClaimRequest, PreparationClaims } from "./preparation-claims.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function claimsOf(store: EntryStore): PreparationClaims {
  const claims = store.preparationClaims;
  if (claims === undefined) throw new Error(`${store.location} has no preparationClaims`);
  return claims;
}

function claimedToken(outcome: PreparationClaimOutcome): string {
  if (!outcome.claimed) throw new Error(`expected the claim to be taken, but it was refused (${outcome.reason})`);
  return outcome.claim.token;
}

async function rejection(promise: Promise<unknown>): Promise<CompactionError> {
  try {
    await promise;
  } catch (error) {
    return error as CompactionError;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** Registers the claims suite for the store `name` makes (its sessions must have `preparationClaims`). */
export function describePreparationClaimsContract(name: string, factory: EntryStoreContractFactory): void {
  const opened: EntryStore[] = [];
  const track = (store: EntryStore): EntryStore => {
    opened.push(store);
    return store;
  };
  /** A session with four entries, and a second handle on it (another worker). */
  const shared = async (): Promise<{ a: EntryStore; b: EntryStore; ids: string[] }> => {
    const a = track(await factory.create());
    const written = await a.append([contractUser("one"), contractAssistant("two"), contractUser("three"), contractAssistant("four")]);
    const b = track(await factory.reopen(a));
    return { a, b, ids: written.map((entry) => entry.id) };
  };
  const request = (owner: string, overrides: Partial<PreparationClaimRequest> = {}): PreparationClaimRequest => ({
    owner,
    baseCompactionId: null,
    headEntryId: null,
    tokens: 1_200,
    leaseMs: 60_000,
    ...overrides,
  });

  describe(`preparation claims: ${name}`, () => {
    afterAll(async () => {
      for (const store of opened) await store.close().catch(() => undefined);
    });

    it("gives the claim to the first worker and refuses a second one on the same base, naming the holder", async () => {
      const { a, b, ids } = await shared();
      const first = await claimsOf(a).claim(request("worker a", { headEntryId: ids[3] as string }));
      expect(first).toMatchObject({ claimed: true, claim: { owner: "worker a", baseCompactionId: null, headEntryId: ids[3], tokens: 1_200, readyAt: null } });
      const second = await claimsOf(b).claim(request("worker b"));
      expect(second).toMatchObject({ claimed: false, reason: "held", holder: { owner: "worker a", state: "live", token: claimedToken(first) } });
      const current = await claimsOf(b).current();
      expect(current).toMatchObject({ owner: "worker a", state: "live", headEntryId: ids[3] });
      expect(current?.ageMs).toBeGreaterThanOrEqual(0);
      expect(current?.expiresInMs).toBeGreaterThan(0);
      expect(Date.parse(current?.expiresAt ?? "")).toBeGreaterThan(Date.parse(current?.claimedAt ?? ""));
    });

    it("lets exactly one of two workers claiming at once take it", async () => {
      const { a, b } = await shared();
      const outcomes = await Promise.all([claimsOf(a).claim(request("worker a")), claimsOf(b).claim(request("worker b"))]);
      expect(outcomes.filter((outcome) => outcome.claimed)).toHaveLength(1);
      expect(outcomes.filter((outcome) => !outcome.claimed && outcome.reason === "held")).toHaveLength(1);
    });

    it("after the holder releases it, another worker claims it; a second release changes nothing", async () => {
      const { a, b } = await shared();
      const token = claimedToken(await claimsOf(a).claim(request("worker a")));
      expect(await claimsOf(a).release(token)).toBe(true);
      expect(await claimsOf(b).current()).toBeNull();
      expect(await claimsOf(a).release(token)).toBe(false);
      const next = await claimsOf(b).claim(request("worker b"));
      expect(next).toMatchObject({ claimed: true, claim: { owner: "worker b" } });
    });

    it("counts a claim whose lease ran out as abandoned: another worker takes it over, and the old token renews and releases nothing", async () => {
      const { a, b } = await shared();
      const stale = claimedToken(await claimsOf(a).claim(request("crashed worker", { leaseMs: 30 })));
      await sleep(80);
      expect(await claimsOf(b).current()).toMatchObject({ owner: "crashed worker", state: "expired" });
      const taken = await claimsOf(b).claim(request("worker b"));
      expect(taken).toMatchObject({ claimed: true, claim: { owner: "worker b" } });
      expect(await claimsOf(a).renew(stale, { leaseMs: 60_000 })).toBeNull();
      expect(await claimsOf(a).release(stale)).toBe(false);
      expect(await claimsOf(a).current()).toMatchObject({ owner: "worker b", state: "live" });
    });

    it("renewing extends the lease and records when the preparation was ready, once", async () => {
      const { a } = await shared();
      const claimed = await claimsOf(a).claim(request("worker a", { leaseMs: 1_000 }));
      if (!claimed.claimed) throw new Error("expected the claim");
      await sleep(5);
      const renewed = await claimsOf(a).renew(claimed.claim.token, { leaseMs: 120_000 });
      expect(renewed?.readyAt).toBeNull();
      expect(Date.parse(renewed?.expiresAt ?? "")).toBeGreaterThan(Date.parse(claimed.claim.expiresAt));
      const ready = await claimsOf(a).renew(claimed.claim.token, { leaseMs: 120_000, ready: true });
      expect(ready?.readyAt).not.toBeNull();
      await sleep(5);
      const again = await claimsOf(a).renew(claimed.claim.token, { leaseMs: 120_000, ready: true });
      expect(again?.readyAt).toBe(ready?.readyAt);
      expect(await claimsOf(a).current()).toMatchObject({ state: "live", readyAt: ready?.readyAt });
    });

    it("refuses a claim from a base that is no longer the newest compaction (moved), and counts a claim from an old base as stale", async () => {
      const { a, b, ids } = await shared();
      claimedToken(await claimsOf(a).claim(request("worker a")));
      const write = await b.appendCompaction(contractCompaction(ids[2] as string), { newestCompactionId: null });
      if (!write.written) throw new Error("expected the compaction to be written");
      // The holder's base is gone: its claim no longer counts.
      expect(await claimsOf(b).current()).toMatchObject({ owner: "worker a", state: "stale" });
      // A worker whose view is behind is told to read the branch again, and nothing is claimed.
      expect(await claimsOf(b).claim(request("worker b"))).toStrictEqual({ claimed: false, reason: "moved", newestCompactionId: write.entry.id });
      expect(await claimsOf(b).current()).toMatchObject({ owner: "worker a" });
      const next = await claimsOf(b).claim(request("worker b", { baseCompactionId: write.entry.id }));
      expect(next).toMatchObject({ claimed: true, claim: { owner: "worker b", baseCompactionId: write.entry.id } });
    });

    it("never changes the session's version, entries or branch", async () => {
      const { a, b } = await shared();
      const version = await a.version();
      const entries = await a.entries();
      const token = claimedToken(await claimsOf(a).claim(request("worker a")));
      await claimsOf(a).renew(token, { leaseMs: 60_000, ready: true });
      await claimsOf(b).claim(request("worker b"));
      await claimsOf(a).release(token);
      expect(await b.version()).toBe(version);
      expect(await b.entries()).toStrictEqual(entries);
    });

    it("keeps each session's claim to itself", async () => {
      const { a } = await shared();
      const other = track(await factory.create());
      claimedToken(await claimsOf(a).claim(request("worker a")));
      expect(await claimsOf(other).current()).toBeNull();
      expect(await claimsOf(other).claim(request("worker c"))).toMatchObject({ claimed: true });
    });

    it("refuses a request with a wrong field, naming each one and the session, and claims nothing", async () => {
      const { a } = await shared();
      const claims = claimsOf(a);
      const error = await rejection(claims.claim({ owner: "", baseCompactionId: null, headEntryId: null, tokens: -1, leaseMs: 0 }));
      expect(error).toBeInstanceOf(CompactionError);
      expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
      for (const field of ["owner", "tokens", "leaseMs"]) expect(error.message).toContain(`\`${field}\``);
      expect(error.message).toContain(a.location);
      expect(await claims.current()).toBeNull();
      expect((await rejection(claims.renew("", { leaseMs: 10 }))).code).toBe(ErrorCodes.INPUT_INVALID);
      expect((await rejection(claims.renew("t", { leaseMs: Number.NaN }))).message).toContain("`leaseMs`");
      expect((await rejection(claims.release(undefined as unknown as string))).code).toBe(ErrorCodes.INPUT_INVALID);
    });

    it("fails clearly once the store is closed", async () => {
      const store = track(await factory.create());
      const claims = claimsOf(store);
      await store.close();
      await expect(claims.current()).rejects.toThrow(/closed/);
      await expect(claims.claim(request("late"))).rejects.toThrow(/closed/);
    });
  });
}
