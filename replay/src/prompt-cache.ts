/**
 * What a run of requests costs with the provider's prompt cache. Providers bill the part of a
 * request that repeats the previous request's beginning at a fraction of the input price; the
 * rest is billed in full (and, at Anthropic, written to the cache at a premium). So a request is
 * cheap when it differs from the one before only at its end, and a host that rewrites anything
 * early in the request (a pruned output, a shrunk message, a rewritten note) pays it all again.
 *
 * The model here, per request: the cached part is its longest prefix of whole messages identical
 * (as JSON) to the previous request's; the rest is uncached. It assumes the cache is still warm
 * (requests of one session follow each other within the cache's lifetime) and that the host marks
 * the end of the stable prefix where a provider needs it (Anthropic's `cache_control`).
 */
import { MessageKeys } from "./message-keys.js";

/** A provider's input prices as multiples of its base input price. */
export interface CachePrices {
  readonly provider: string;
  /** Tokens read from the cache. */
  readonly cached: number;
  /** Tokens not in the cache (at Anthropic they are also written to it). */
  readonly uncached: number;
}

/** Anthropic: cache reads at 0.1x, cache writes at 1.25x (the 5-minute cache). */
export const ANTHROPIC_PRICES: CachePrices = Object.freeze({ provider: "anthropic", cached: 0.1, uncached: 1.25 });
/** OpenAI: cached input at 0.1x (the GPT-5 family), the rest at 1x; caching is automatic. */
export const OPENAI_PRICES: CachePrices = Object.freeze({ provider: "openai", cached: 0.1, uncached: 1 });
export const CACHE_PRICES: readonly CachePrices[] = Object.freeze([ANTHROPIC_PRICES, OPENAI_PRICES]);

/**
 * A request is a cache miss when it reads less than this share of the previous request from the
 * cache (and a request counts as mostly uncached when less than this share of its tokens was).
 */
export const MOSTLY_UNCACHED_BELOW = 0.5;

/** One request as the cache saw it. */
export interface RequestCost {
  readonly messages: number;
  readonly tokens: number;
  /** Messages at the start that repeat the previous request's. */
  readonly cachedMessages: number;
  readonly cachedTokens: number;
  /** The request's first changed message (the first uncached one), or null when all of it was cached. */
  readonly firstChanged: number | null;
}

/** A run of requests, summed. */
export interface CacheSummary {
  readonly requests: number;
  /**
   * Requests that threw the cache away: they read less than half of what the previous request
   * sent from the cache (`MOSTLY_UNCACHED_BELOW`), because something early in it changed (a
   * compaction, a prune, a message shrunk anew). The first request counts (the cache is cold). A
   * request that only appends much new text (a large tool output) is not one: nothing could
   * have cached that.
   */
  readonly misses: number;
  /** Requests with less than half of their own tokens cached, for whatever reason (misses and large appends). */
  readonly mostlyUncached: number;
  /** Input tokens over every request. */
  readonly inputTokens: number;
  readonly cachedTokens: number;
  /** `cachedTokens / inputTokens` (0 with no input). */
  readonly hitShare: number;
  /** Input billed at each provider's prices, in tokens at the base input price, by provider. */
  readonly billed: Readonly<Record<string, number>>;
  /** The most input tokens one request held. */
  readonly largestRequest: number;
}

/** Billed input tokens for `cachedTokens` of `inputTokens` read from the cache, at `prices`. */
export function billedTokens(inputTokens: number, cachedTokens: number, prices: CachePrices): number {
  return cachedTokens * prices.cached + (inputTokens - cachedTokens) * prices.uncached;
}

/**
 * Follows the requests of one session: `record` each request in order; `summary()` sums them.
 * Messages are compared by their JSON, so a message rebuilt with the same content still hits.
 */
export class PromptCacheMeter<T> {
  readonly #tokensOf: (message: T) => number;
  readonly #prices: readonly CachePrices[];
  /** The previous request's messages (as JSON) and their tokens. */
  #previous: { readonly keys: readonly string[]; readonly tokens: readonly number[] } = { keys: [], tokens: [] };
  readonly #keys = new MessageKeys<T>();
  #requests = 0;
  #misses = 0;
  #mostlyUncached = 0;
  #inputTokens = 0;
  #cachedTokens = 0;
  #largest = 0;
  readonly #billed = new Map<string, number>();

  constructor(tokensOf: (message: T) => number, prices: readonly CachePrices[] = CACHE_PRICES) {
    this.#tokensOf = tokensOf;
    this.#prices = prices;
  }

  /** Records one request, sent after the previous one recorded. */
  record(request: readonly T[]): RequestCost {
    const keys = request.map((message) => this.#keys.of(message));
    const tokens = request.map((message) => this.#tokensOf(message));
    let cachedMessages = 0;
    while (cachedMessages < keys.length && cachedMessages < this.#previous.keys.length && keys[cachedMessages] === this.#previous.keys[cachedMessages]) {
      cachedMessages += 1;
    }
    let total = 0;
    let cached = 0;
    tokens.forEach((count, i) => {
      total += count;
      if (i < cachedMessages) cached += count;
    });
    let previousTotal = 0;
    for (const count of this.#previous.tokens) previousTotal += count;
    this.#previous = { keys, tokens };
    this.#requests += 1;
    const reusable = Math.min(previousTotal, total);
    if (reusable === 0 || cached < MOSTLY_UNCACHED_BELOW * reusable) this.#misses += 1;
    if (total > 0 && cached / total < MOSTLY_UNCACHED_BELOW) this.#mostlyUncached += 1;
    this.#inputTokens += total;
    this.#cachedTokens += cached;
    this.#largest = Math.max(this.#largest, total);
    for (const prices of this.#prices) this.#billed.set(prices.provider, (this.#billed.get(prices.provider) ?? 0) + billedTokens(total, cached, prices));
    return { messages: request.length, tokens: total, cachedMessages, cachedTokens: cached, firstChanged: cachedMessages === request.length ? null : cachedMessages };
  }

  summary(): CacheSummary {
    return {
      requests: this.#requests,
      misses: this.#misses,
      mostlyUncached: this.#mostlyUncached,
      inputTokens: this.#inputTokens,
      cachedTokens: this.#cachedTokens,
      hitShare: this.#inputTokens === 0 ? 0 : this.#cachedTokens / this.#inputTokens,
      billed: Object.freeze(Object.fromEntries(this.#prices.map((p) => [p.provider, Math.round(this.#billed.get(p.provider) ?? 0)]))),
      largestRequest: this.#largest,
    };
  }
}
