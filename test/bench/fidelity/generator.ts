/**
 * Seeded generator of long agent sessions with planted facts. Filler turns fill the session up
 * to `targetTokens` (and number at least one per fact); each fact kind is planted `factsPerKind` times, alternately early (the
 * first fifth of the turns) and mid-session (up to three fifths), each about its own topic; the
 * last request ends the session. The same seed gives the same session.
 */
import type { PiMessage } from "@compaction/core";
import { messageText } from "@compaction/plugin-recall";
import type { Fact, FactPosition } from "./facts.js";
import { Filler, TOPICS } from "./filler.js";
import { lastRequest, PLANTERS, type PlantedTurn } from "./plant.js";
import { type Random, seededRandom } from "./random.js";

export interface GenerateOptions {
  readonly seed: number;
  /** Size of the whole session, by `count`. */
  readonly targetTokens: number;
  /** Facts planted per kind (constraint, decision, identifier, error). Default 6. */
  readonly factsPerKind?: number;
  /** Tokens of one message. Default: chars/4 of its text. */
  readonly count?: (message: PiMessage) => number;
}

export interface GeneratedSession {
  readonly messages: PiMessage[];
  /** Every planted fact, in session order; the last request is the last one. */
  readonly facts: Fact[];
  /** Size by `count`. */
  readonly tokens: number;
}

const EARLY: readonly [number, number] = [0.03, 0.2];
const MID: readonly [number, number] = [0.2, 0.6];
const START = Date.UTC(2026, 0, 5, 9, 0, 0);

const estimate = (message: PiMessage): number => Math.ceil(messageText(message).length / 4);

/** A session of about `targetTokens` with every fact kind planted. Throws if a needle also occurs outside its turn. */
export function generateSession(options: GenerateOptions): GeneratedSession {
  const { seed, targetTokens, factsPerKind = 6 } = options;
  const count = options.count ?? estimate;
  const random = seededRandom(seed);
  const filler = new Filler(random);
  const kinds = Object.keys(PLANTERS);
  if (kinds.length * factsPerKind + 1 > TOPICS.length) {
    throw new Error(`factsPerKind ${factsPerKind} needs ${kinds.length * factsPerKind + 1} topics; there are ${TOPICS.length}. Use at most ${Math.floor((TOPICS.length - 1) / kinds.length)}.`);
  }
  const topics = shuffle([...TOPICS], random);

  // The fact turns first (their size counts toward the target), then the filler around them.
  const planted: { turn: PlantedTurn; position: FactPosition }[] = [];
  for (const kind of kinds) {
    const builders = PLANTERS[kind] ?? [];
    for (let i = 0; i < factsPerKind; i++) {
      const build = builders[i % builders.length];
      if (build === undefined) continue;
      planted.push({ turn: build(filler, random, topics.pop() as string), position: i % 2 === 0 ? "early" : "mid" });
    }
  }
  const last = lastRequest(filler, random, topics.pop() as string);

  let tokens = [...planted.map((p) => p.turn), last].reduce((sum, t) => sum + t.messages.reduce((s, m) => s + count(m), 0), 0);
  const fillerTurns: PiMessage[][] = [];
  // At least one filler turn per fact, so that every fact has a slot of its own.
  while (tokens < targetTokens || fillerTurns.length <= planted.length) {
    const turn = filler.turn();
    fillerTurns.push(turn);
    tokens += turn.reduce((s, m) => s + count(m), 0);
  }

  // Each fact goes after a distinct filler turn inside its position's range.
  const after = new Map<number, (typeof planted)[number][]>();
  const taken = new Set<number>();
  for (const p of planted) {
    const [from, to] = p.position === "early" ? EARLY : MID;
    const slot = freeSlot(Math.floor((from + random.next() * (to - from)) * fillerTurns.length), taken, fillerTurns.length);
    taken.add(slot);
    after.set(slot, [...(after.get(slot) ?? []), p]);
  }

  const messages: PiMessage[] = [];
  const facts: Fact[] = [];
  const ranges: { fact: Fact; from: number; to: number }[] = [];
  const place = (turn: PlantedTurn, position: FactPosition): void => {
    const from = messages.length;
    messages.push(...turn.messages);
    const fact: Fact = { kind: turn.kind, detail: turn.detail, needle: turn.needle, query: turn.query, messageIndex: from + turn.carrier, position };
    facts.push(fact);
    ranges.push({ fact, from, to: messages.length });
    checkQuery(turn);
  };
  fillerTurns.forEach((turn, i) => {
    messages.push(...turn);
    for (const p of after.get(i) ?? []) place(p.turn, p.position);
  });
  place(last, "end");

  restamp(messages, random);
  checkNeedles(messages, ranges);
  return { messages, facts, tokens };
}

/** `wanted` if free, else the nearest free slot (later ones first at equal distance). */
function freeSlot(wanted: number, taken: ReadonlySet<number>, slots: number): number {
  for (let distance = 0; distance < slots; distance++) {
    for (const slot of [wanted + distance, wanted - distance]) if (slot >= 0 && slot < slots && !taken.has(slot)) return slot;
  }
  throw new Error(`No free slot among ${slots} filler turns.`);
}

function shuffle<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Timestamps in session order, a few seconds apart (fact turns were built before the filler). */
function restamp(messages: PiMessage[], random: Random): void {
  let clock = START;
  for (const message of messages) {
    clock += random.int(4, 60) * 1000;
    message.timestamp = clock;
  }
}

function checkQuery(turn: PlantedTurn): void {
  const query = turn.query.toLowerCase();
  for (const secret of [turn.needle, ...turn.secrets]) {
    if (query.includes(secret.toLowerCase())) throw new Error(`The query "${turn.query}" of a ${turn.kind} fact contains "${secret}", part of its needle.`);
  }
}

/** Each needle must be in its carrier message and in no message outside its own turn. */
function checkNeedles(messages: readonly PiMessage[], ranges: readonly { fact: Fact; from: number; to: number }[]): void {
  const texts = messages.map((m) => messageText(m));
  for (const { fact, from, to } of ranges) {
    if (!(texts[fact.messageIndex] ?? "").includes(fact.needle)) {
      throw new Error(`The ${fact.kind} needle "${fact.needle}" is not in its carrier message ${fact.messageIndex}.`);
    }
    const elsewhere = texts.findIndex((text, i) => (i < from || i >= to) && text.includes(fact.needle));
    if (elsewhere !== -1) throw new Error(`The ${fact.kind} needle "${fact.needle}" also occurs in message ${elsewhere}, outside its turn; change the seed.`);
  }
}
