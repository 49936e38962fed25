/**
 * The turns that carry a planted fact, one builder per kind. Each fact is stated the way an
 * agent session states it: a constraint in the user's words, a decision and its reason in the
 * assistant's reply, an identifier in a reply or a tool output, an error line in a failed tool
 * result, the last request as the final user message. Each needle holds a coined word or a
 * random number, so it occurs nowhere else; each query names the topic and the words around the
 * needle, never the needle.
 */
import type { PiAssistantMessage, PiMessage, PiToolResultMessage, PiUserMessage } from "@compaction/core";
import type { Filler } from "./filler.js";
import type { Random } from "./random.js";

/** A fact turn before it is placed: its messages, which one states the fact, and the fact. */
export interface PlantedTurn {
  readonly messages: PiMessage[];
  /** Index in `messages` of the message that states the needle. */
  readonly carrier: number;
  readonly kind: string;
  readonly detail: string;
  readonly needle: string;
  readonly query: string;
  /** The parts of the needle no query may contain (the coined word, the number, the hash). */
  readonly secrets: readonly string[];
}

type Builder = (filler: Filler, random: Random, topic: string) => PlantedTurn;

const CONSTRAINTS: readonly ((w: string) => string)[] = [
  (w) => `never call the ${w} client from a request handler`,
  (w) => `do not add new dependencies to ${w}-core`,
  (w) => `keep every ${w} migration reversible`,
  (w) => `only write logs through the ${w} logger`,
  (w) => `never store ${w} tokens in plain text`,
  (w) => `always run the ${w} checks before pushing`,
];
const CONSTRAINT_FRAMES: readonly [(t: string, needle: string) => string, (t: string) => string][] = [
  [(t, n) => `Hard rule for the ${t} code: ${n}.`, (t) => `${t} hard rule`],
  [(t, n) => `A constraint on ${t} from the team: ${n}.`, (t) => `${t} constraint from the team`],
  [(t, n) => `Requirement for ${t}, not negotiable: ${n}.`, (t) => `${t} requirement not negotiable`],
];

const CHOICES: readonly [string, string, string][] = [
  ["storage", "SQLite", "Postgres"],
  ["queue", "Redis streams", "RabbitMQ"],
  ["api", "gRPC", "REST"],
  ["packaging", "pnpm", "npm"],
  ["test runner", "vitest", "jest"],
];
const REASONS: readonly ((w: string, n: number) => string)[] = [
  (w, n) => `the ${w} benchmark ran ${n}% faster`,
  (w, n) => `it keeps the ${w} p99 under ${n} ms`,
  (w) => `${w} already runs it in production`,
  (w, n) => `it cut the ${w} build to ${n} seconds`,
];

const ERRORS: readonly ((w: string, t: string, r: Random) => string)[] = [
  (w, t, r) => `Error: ENOSPC: no space left on device, write '/var/lib/${w}/${t}-${r.hex(4)}.log'`,
  (_w, _t, r) => `Error: connect ECONNREFUSED 127.0.0.1:${r.int(20000, 65000)}`,
  (w, t) => `Error: EACCES: permission denied, open '/etc/${w}/${t}.pem'`,
  (w) => `TypeError: Cannot read properties of undefined (reading '${w}')`,
  (w, t) => `Error [ERR_MODULE_NOT_FOUND]: Cannot find package '${w}' imported from /app/src/${t}/index.js`,
];

/** Replaces the text of the turn's closing assistant message. */
function closeWith(filler: Filler, messages: PiMessage[], text: string): number {
  const last = messages.length - 1;
  messages[last] = filler.assistant(text);
  return last;
}

const constraint: Builder = (filler, random, topic) => {
  const w = random.coined();
  const needle = random.pick(CONSTRAINTS)(w);
  const [frame, query] = random.pick(CONSTRAINT_FRAMES);
  const request = `Please ${random.pick(["update", "fix", "review", "refactor"])} the ${topic} handler next. ${frame(topic, needle)} ${filler.sentences(0, 2)}`.trim();
  return { messages: filler.turn(topic, request), carrier: 0, kind: "constraint", detail: "user", needle, query: query(topic), secrets: [w] };
};

const decision: Builder = (filler, random, topic) => {
  const w = random.coined();
  const n = random.int(11, 97);
  const [area, chosen, rejected] = random.pick(CHOICES);
  const needle = `${chosen} over ${rejected} because ${random.pick(REASONS)(w, n)}`;
  const messages = filler.turn(topic);
  const carrier = closeWith(filler, messages, `${filler.sentences(1, 2)} Decision for the ${topic} ${area}: we chose ${needle}. ${filler.sentences(0, 2)}`.trim());
  return { messages, carrier, kind: "decision", detail: area, needle, query: `${topic} ${area} decision`, secrets: [w, String(n)] };
};

const port: Builder = (filler, random, topic) => {
  const value = random.int(20000, 65000);
  const needle = `port ${value}`;
  const messages = filler.turn(topic);
  const env = filler.call("bash", { command: `cat deploy/${topic}.env` });
  const upper = topic.toUpperCase();
  const output = `${upper}_HOST=0.0.0.0\n${upper}_PORT=${value}\n${upper}_LOG_LEVEL=info\n${upper}_TIMEOUT_MS=${random.int(100, 9000)}`;
  messages.splice(messages.length - 1, 0, filler.assistant("", [env]), filler.result(env, output));
  const carrier = closeWith(filler, messages, `${filler.sentences(1, 2)} So the ${topic} service listens on ${needle} in staging. ${filler.sentences(0, 2)}`.trim());
  return { messages, carrier, kind: "identifier", detail: "port", needle, query: `${topic} service listens in staging`, secrets: [String(value)] };
};

const path: Builder = (filler, random, topic) => {
  const w = random.coined();
  const needle = `/srv/${w}/config/${topic}-${random.hex(4)}.yaml`;
  const messages = filler.turn(topic);
  const read = filler.call("read", { path: needle });
  const yaml = `${topic}:\n  enabled: true\n  replicas: ${random.int(1, 9)}\n  timeout: ${random.int(1, 60)}s\n  owner: team-${filler.topic()}`;
  const carrierMessage: PiAssistantMessage = filler.assistant(`The ${topic} settings live in ${needle}; reading it.`, [read]);
  messages.splice(messages.length - 1, 0, carrierMessage, filler.result(read, yaml));
  return { messages, carrier: messages.indexOf(carrierMessage), kind: "identifier", detail: "path", needle, query: `${topic} settings file`, secrets: [w] };
};

const hash: Builder = (filler, random, topic) => {
  const needle = random.hex(12);
  const messages = filler.turn(topic);
  const log = filler.call("bash", { command: `git log --oneline -6 -- src/${topic}` });
  const lines = Array.from({ length: 6 }, (_, i) => `${i === 2 ? needle.slice(0, 7) : random.hex(7)} ${filler.sentence()}`);
  messages.splice(messages.length - 1, 0, filler.assistant("", [log]), filler.result(log, lines.join("\n")));
  const carrier = closeWith(filler, messages, `${filler.sentences(1, 2)} The ${topic} fix landed in commit ${needle} on main. ${filler.sentences(0, 1)}`.trim());
  return { messages, carrier, kind: "identifier", detail: "hash", needle, query: `${topic} fix landed in commit`, secrets: [needle.slice(0, 7)] };
};

const url: Builder = (filler, random, topic) => {
  const w = random.coined();
  const needle = `https://${w}.${topic}.internal/dashboards/${random.hex(6)}`;
  const request = `The ${topic} staging dashboard is at ${needle}, check it after each deploy. ${filler.sentences(1, 2)}`;
  return { messages: filler.turn(topic, request), carrier: 0, kind: "identifier", detail: "url", needle, query: `${topic} staging dashboard`, secrets: [w] };
};

const error: Builder = (filler, random, topic) => {
  const w = random.coined();
  const needle = random.pick(ERRORS)(w, topic, random);
  const messages = filler.turn(topic);
  const run = filler.call("bash", { command: `npm run test:${topic}` });
  const log = `${filler.testLog(topic, random.int(6, 24))}\n\n${needle}\n    at ${filler.sourcePath(topic)}:${random.int(1, 300)}:${random.int(1, 60)}\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)`;
  const failed: PiToolResultMessage = filler.result(run, log, true);
  messages.splice(messages.length - 1, 0, filler.assistant("", [run]), failed);
  closeWith(filler, messages, `The ${topic} test run failed. ${filler.sentences(1, 3)}`);
  const secrets = [w, ...(needle.match(/\d{5}/g) ?? [])];
  return { messages, carrier: messages.indexOf(failed), kind: "error", detail: "tool result", needle, query: `${topic} test failed with error`, secrets };
};

/** The final user message: the request the agent is working on when the session ends. */
export function lastRequest(filler: Filler, random: Random, topic: string): PlantedTurn {
  const w = random.coined();
  const w2 = random.coined();
  const needle = `rename the ${w} flag in the ${topic} exporter to ${w2}`;
  const message: PiUserMessage = filler.user(`Last thing before you stop: ${needle}. Then tell me what changed.`);
  return { messages: [message], carrier: 0, kind: "lastRequest", detail: "user", needle, query: `last thing before you stop ${topic} exporter`, secrets: [w, w2] };
}

/** Builders per kind; identifiers rotate through port, path, hash and url. */
export const PLANTERS: Readonly<Record<string, readonly Builder[]>> = {
  constraint: [constraint],
  decision: [decision],
  identifier: [port, path, hash, url],
  error: [error],
};
