/**
 * Prefix-stable sending, for a host that sends one conversation request after request. The
 * provider's prompt cache bills a request's beginning at a tenth of the price while it repeats the
 * previous request's, so between two compactions what is sent must differ from the previous
 * request only at its end. `compactor.shapeRequest()` alone is a function of the context: as
 * messages are appended, which messages it shrinks to fit the budget changes, and every request
 * misses the cache. A `RequestShaper` remembers the form in which it sent each message:
 * - a message shrunk (or left out) once is sent in that same form by every later request, as
 *   long as the context only grows at its end (a compaction starts it over);
 * - when the remembered forms and the new messages no longer fit the budget, it shapes the
 *   request afresh (`shapeRequest`'s shrinking), and frees room for the requests after it too:
 *   tool outputs are shrunk down to the compactor's target (`ShrinkOptions.headroomTo`: half the
 *   auto-compaction threshold), so the next such step, and its cache miss, is many messages away;
 * - the plugins' `shapeRequest` taps still run on every request (layered prunes in steps of
 *   `pruneMinSavings`, so its pruning only changes at those steps).
 * Nothing is shrunk while the context fits: thinking, outputs and arguments of earlier messages go
 * out as they are unless the request cannot fit otherwise.
 */
import { shrinkToBudget, type ShrunkMessage } from "../shrink/shrink-to-budget.js";
import { type ShapedRequest, type ShapeRequestInput, type ShapingEngine, runShapingTaps } from "./shape-request.js";
import { COMPACTED_SHARE } from "./usable-window.js";
import { cacheBreakpoints } from "./cache-breakpoints.js";

/** How one message of the context went out: the tapped message it came from and the form sent (null: left out). */
interface SentForm<T> {
  readonly from: T;
  readonly form: T | null;
  readonly record: ShrunkMessage | null;
}

/** What a shaper needs of its compactor beyond the shaping engine: the size it compacts at. */
export interface RequestShaperEngine<T> extends ShapingEngine<T> {
  /** The auto-compaction threshold in tokens, as the provider counts them, for a window and reserve (`Compactor.autoCompactTokens`). */
  autoCompactTokens(contextWindow: number, reserveTokens?: number): number;
}

/** One conversation's sending (see the file's comment). Not shared between conversations. */
export class RequestShaper<T> {
  readonly #engine: RequestShaperEngine<T>;
  /** The context of the previous request, as held (not shaped). */
  #held: readonly T[] = [];
  /** The previous request, as sent. */
  #sent: readonly T[] = [];
  /** By index in the context: messages sent in another form than they came from the taps. */
  #forms = new Map<number, SentForm<T>>();
  readonly #jsonOf = new WeakMap<object, string>();

  constructor(engine: RequestShaperEngine<T>) {
    this.#engine = engine;
  }

  /** The request to send for the context `messages` (the context a host holds, not changed). */
  shape(messages: readonly T[], input: ShapeRequestInput = {}): ShapedRequest<T> {
    const { shaping, shaped, trace } = runShapingTaps(this.#engine, messages, input);
    if (!this.#grewFrom(messages) || shaped.length !== messages.length) this.#forms = new Map();
    this.#held = [...messages];
    const previous = this.#sent;
    const result = (request: Omit<ShapedRequest<T>, "budget" | "shapedBy" | "warnings" | "cacheBreakpoints">): ShapedRequest<T> => {
      this.#sent = request.messages;
      return {
        ...request,
        budget: shaping.budget,
        shapedBy: trace.shapedBy,
        warnings: trace.warnings,
        cacheBreakpoints: cacheBreakpoints(
          request.messages.map((m) => this.#engine.tokens.facts.of(m)),
          this.#unchangedPrefix(previous, request.messages),
        ),
      };
    };

    const again = this.#sameForms(shaped);
    if (again !== null && again.tokens <= shaping.budget) return result(again);

    // A new step: shaped afresh from what the taps gave, with room freed for what comes next.
    const ratio = shaping.providerRatio > 0 ? shaping.providerRatio : 1;
    const target = Math.floor((COMPACTED_SHARE * this.#engine.autoCompactTokens(shaping.contextWindow, shaping.reserveTokens)) / ratio) - shaping.systemPromptTokens;
    const shrunk = shrinkToBudget(shaped, this.#engine.tokens, {
      budget: shaping.budget,
      recallTool: this.#engine.recallTool,
      dropOlder: true,
      ...(target > 0 && target < shaping.budget ? { headroomTo: target } : {}),
    });
    this.#remember(shaped, shrunk.messages, shrunk.shrunk, shrunk.dropped);
    return result(shrunk);
  }

  /** Forgets the forms sent (a host that replaced the context in another way than appending). */
  reset(): void {
    this.#held = [];
    this.#sent = [];
    this.#forms = new Map();
  }

  /** How many messages at the start of `request` the previous request sent the same. */
  #unchangedPrefix(previous: readonly T[], request: readonly T[]): number {
    let n = 0;
    while (n < previous.length && n < request.length && this.#same(previous[n] as T, request[n] as T)) n += 1;
    return n;
  }

  /**
   * True when `messages` begins with the previous request's context (nothing before its end
   * changed). Hosts that rebuild their messages for every call (pi's `context` event, OpenClaw's
   * `assemble`) give equal copies, so a message that is not the same object is compared by content.
   */
  #grewFrom(messages: readonly T[]): boolean {
    if (messages.length < this.#held.length) return false;
    for (let i = 0; i < this.#held.length; i++) if (!this.#same(messages[i] as T, this.#held[i] as T)) return false;
    return true;
  }

  /** The request with every message in the form it went out in before, or null when a tap now gives another message where one was shrunk. */
  #sameForms(shaped: readonly T[]): Omit<ShapedRequest<T>, "budget" | "shapedBy" | "warnings" | "cacheBreakpoints"> | null {
    const out: T[] = [];
    const shrunk: ShrunkMessage[] = [];
    const dropped: number[] = [];
    let tokens = 0;
    for (let i = 0; i < shaped.length; i++) {
      const message = shaped[i] as T;
      const sent = this.#forms.get(i);
      if (sent !== undefined && !this.#same(sent.from, message)) return null;
      if (sent?.form === null) {
        dropped.push(i);
        continue;
      }
      const form = sent?.form ?? message;
      if (sent?.record) shrunk.push(sent.record);
      out.push(form);
      tokens += this.#engine.tokens.count(form);
    }
    const changed = this.#forms.size > 0;
    return { messages: changed ? out : shaped, shrunk, dropped, tokens, fits: true };
  }

  #remember(shaped: readonly T[], sent: readonly T[], shrunk: readonly ShrunkMessage[], dropped: readonly number[]): void {
    const forms = new Map<number, SentForm<T>>();
    const gone = new Set(dropped);
    for (const i of gone) forms.set(i, { from: shaped[i] as T, form: null, record: null });
    // `sent` leaves out the dropped messages: map each index of `shaped` to its place in it.
    let position = 0;
    const placeOf = new Map<number, number>();
    for (let i = 0; i < shaped.length; i++) if (!gone.has(i)) placeOf.set(i, position++);
    for (const record of shrunk) {
      const place = placeOf.get(record.index);
      if (place === undefined) continue;
      forms.set(record.index, { from: shaped[record.index] as T, form: sent[place] as T, record });
    }
    this.#forms = forms;
  }

  /** The same message: the same object, or (a host or a tap that builds copies, as layered's pruning) the same content. */
  #same(a: T, b: T): boolean {
    return a === b || this.#json(a) === this.#json(b);
  }

  /** A message's JSON, computed once per object. */
  #json(message: T): string {
    if (typeof message !== "object" || message === null) return JSON.stringify(message);
    let json = this.#jsonOf.get(message);
    if (json === undefined) {
      json = JSON.stringify(message);
      this.#jsonOf.set(message, json);
    }
    return json;
  }
}
