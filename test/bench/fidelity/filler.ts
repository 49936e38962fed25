/**
 * Filler traffic of a coding-agent session: requests, short assistant replies, tool calls and
 * their outputs (source files, test logs, grep hits). It mentions every topic often, with paths,
 * hashes, ports and error lines of its own, so that a fact is one needle among many similar
 * lines, as in a real session.
 */
import type { PiAssistantMessage, PiMessage, PiToolCall, PiToolResultMessage, PiUserMessage } from "@compaction/core";
import type { Random } from "./random.js";

/** Modules of the imaginary code base: each planted fact is about one of them. */
export const TOPICS = [
  "billing", "ingest", "scheduler", "auth", "search", "notifications", "exporter", "webhooks",
  "gateway", "metrics", "cache", "uploader", "invoices", "reports", "sync", "queue",
  "audit", "profiles", "payments", "catalog", "checkout", "mailer", "thumbnails", "tenancy",
  "ledger", "pricing", "routing", "blobstore", "tracing", "workflow", "inventory", "shipping",
  "coupons", "locale", "feeds", "imports", "archive", "consent", "onboarding", "payroll",
] as const;

const NOUNS = [
  "handler", "service", "config", "settings", "client", "worker", "schema", "migration", "test", "fixture",
  "endpoint", "route", "module", "adapter", "parser", "retry", "timeout", "token", "session", "request",
  "response", "payload", "record", "batch", "index", "table", "column", "query", "cursor", "limit",
  "dashboard", "deploy", "staging", "build", "commit", "branch", "release", "log", "metric", "alert",
];
const VERBS = [
  "update", "check", "fix", "refactor", "rename", "move", "split", "merge", "validate", "parse",
  "load", "store", "retry", "cache", "log", "document", "test", "clean", "review", "wire",
];
const WORDS = [
  "the", "a", "and", "so", "that", "it", "we", "this", "with", "for", "from", "into", "when", "after",
  "before", "still", "again", "now", "then", "first", "also", "which", "where",
  "value", "error", "failed", "passes", "returns", "throws", "expected", "received", "empty", "missing",
  "default", "option", "flag", "path", "file", "line", "type", "field", "call", "result", "output",
  "input", "case", "edge", "slow", "fast", "small", "large", "old", "new", "next", "last", "same",
];
/**
 * Everyday preferences and choices, said now and then as in any session: they compete with the
 * planted constraints and decisions for the summary's few lines.
 */
const PREFERENCES: readonly ((t: string, noun: string) => string)[] = [
  (t) => `Make sure the ${t} tests still pass afterwards.`,
  (t, noun) => `Please avoid touching the ${t} ${noun} for now.`,
  (t) => `Don't change the public ${t} API in this pass.`,
  (t, noun) => `Always keep the ${t} ${noun} backwards compatible.`,
];
const CHOICES_MADE: readonly ((t: string, noun: string) => string)[] = [
  (t, noun) => `I'll use the existing ${noun} helper instead of a new one in ${t}.`,
  (t, noun) => `Going with a plain loop rather than recursion for the ${t} ${noun}.`,
  (t, noun) => `I decided to keep the ${t} ${noun} in one file because it is small.`,
];

const TYPES = ["Input", "Result", "Options", "State", "Record", "Event", "Payload", "Config"];
const FILES = ["index", "handler", "client", "schema", "worker", "routes", "types", "utils", "store", "retry"];

/** Builds filler messages; timestamps advance by a few seconds per message. */
export class Filler {
  readonly #random: Random;
  #clock: number;
  #calls = 0;

  constructor(random: Random, start = Date.UTC(2026, 0, 5, 9, 0, 0)) {
    this.#random = random;
    this.#clock = start;
  }

  /** The next message time, a few seconds after the previous one. */
  tick(): number {
    this.#clock += this.#random.int(4, 60) * 1000;
    return this.#clock;
  }

  topic(): string {
    return this.#random.pick(TOPICS);
  }

  /** One sentence of 8–20 words about a random topic. */
  sentence(): string {
    const r = this.#random;
    const parts = [r.pick(VERBS), "the", r.pick(TOPICS), r.pick(NOUNS)];
    const length = r.int(4, 16);
    for (let i = 0; i < length; i++) parts.push(r.chance(0.12) ? r.pick(TOPICS) : r.chance(0.2) ? r.pick(NOUNS) : r.pick(WORDS));
    const text = parts.join(" ");
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
  }

  sentences(min: number, max: number): string {
    return Array.from({ length: this.#random.int(min, max) }, () => this.sentence()).join(" ");
  }

  /** A source path such as `src/billing/retry.ts`. */
  sourcePath(topic = this.topic()): string {
    return `src/${topic}/${this.#random.pick(FILES)}.ts`;
  }

  user(text: string): PiUserMessage {
    return { role: "user", content: [{ type: "text", text }], timestamp: this.tick() };
  }

  assistant(text: string, calls: readonly PiToolCall[] = []): PiAssistantMessage {
    return {
      role: "assistant",
      content: [...(text === "" ? [] : [{ type: "text" as const, text }]), ...calls],
      stopReason: calls.length > 0 ? "toolUse" : "stop",
      timestamp: this.tick(),
    };
  }

  call(name: string, args: Record<string, unknown>): PiToolCall {
    this.#calls += 1;
    return { type: "toolCall", id: `call_${this.#calls.toString(36)}_${this.#random.hex(6)}`, name, arguments: args };
  }

  result(call: PiToolCall, text: string, isError = false): PiToolResultMessage {
    return { role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError, timestamp: this.tick() };
  }

  /** A TypeScript-looking file of `lines` lines. */
  code(topic: string, lines: number): string {
    const r = this.#random;
    const out: string[] = [`import { ${r.pick(TYPES)} } from "../${r.pick(TOPICS)}/${r.pick(FILES)}.js";`, ""];
    while (out.length < lines) {
      const noun = r.pick(NOUNS);
      const Noun = `${noun.charAt(0).toUpperCase()}${noun.slice(1)}`;
      const choice = r.int(0, 7);
      if (choice === 0) out.push(`export async function ${r.pick(VERBS)}${Noun}(input: ${Noun}${r.pick(TYPES)}): Promise<${Noun}${r.pick(TYPES)}> {`);
      else if (choice === 1) out.push(`  const ${noun} = await ${topic}${Noun}.${r.pick(VERBS)}(input.${r.pick(NOUNS)}, { retries: ${r.int(1, 9)} });`);
      else if (choice === 2) out.push(`  if (!${noun}) throw new Error("${topic} ${noun} ${r.pick(["missing", "invalid", "expired", "empty"])}");`);
      else if (choice === 3) out.push(`  // ${this.sentence()}`);
      else if (choice === 4) out.push(`  return { ...${noun}, ${r.pick(NOUNS)}: ${r.int(0, 5000)} };`);
      else if (choice === 5) out.push("}");
      else if (choice === 6) out.push(`  log.debug("${topic} ${r.pick(VERBS)} ${noun}", { id: "${r.hex(8)}" });`);
      else out.push(`  const url = \`http://localhost:${r.int(3000, 3999)}/${topic}/${noun}\`;`);
    }
    return out.join("\n");
  }

  /** A test runner's output, with an occasional failing assertion. */
  testLog(topic: string, lines: number): string {
    const r = this.#random;
    const out = [`> vitest run src/${topic}`, ""];
    while (out.length < lines) {
      if (r.chance(0.08)) {
        out.push(`  ✗ ${topic} ${r.pick(NOUNS)} ${r.pick(WORDS)} ${r.pick(WORDS)}`);
        out.push(`    AssertionError: expected ${r.int(0, 999)} to equal ${r.int(0, 999)}`);
        out.push(`      at ${this.sourcePath(topic)}:${r.int(1, 400)}:${r.int(1, 80)}`);
      } else {
        out.push(`  ✓ ${topic} ${r.pick(NOUNS)} ${r.pick(WORDS)} ${r.pick(NOUNS)} (${r.int(1, 900)} ms)`);
      }
    }
    out.push("", ` Test Files  ${r.int(1, 30)} passed`, ` Duration  ${r.int(1, 40)}.${r.int(0, 99)}s`);
    return out.join("\n");
  }

  /** `grep -rn` hits. */
  grep(word: string, lines: number): string {
    const r = this.#random;
    return Array.from({ length: lines }, () => {
      const topic = r.pick(TOPICS);
      return `${this.sourcePath(topic)}:${r.int(1, 500)}:  const ${word} = ${topic}.${r.pick(VERBS)}(${r.pick(NOUNS)});`;
    }).join("\n");
  }

  /** One tool call with a plausible output; output sizes vary from a line to a large file. */
  toolStep(topic: string): [PiToolCall, PiToolResultMessage] {
    const r = this.#random;
    const choice = r.int(0, 9);
    if (choice <= 3) {
      const path = this.sourcePath(topic);
      const call = this.call("read", { path });
      return [call, this.result(call, this.code(topic, r.int(12, 110)))];
    }
    if (choice <= 5) {
      const call = this.call("bash", { command: `npx vitest run src/${topic}` });
      return [call, this.result(call, this.testLog(topic, r.int(8, 60)))];
    }
    if (choice <= 7) {
      const word = r.pick(NOUNS);
      const call = this.call("bash", { command: `grep -rn "${word}" src/` });
      return [call, this.result(call, this.grep(word, r.int(3, 30)))];
    }
    const path = this.sourcePath(topic);
    const call = this.call("edit", { path, oldText: this.sentence(), newText: this.sentence() });
    return [call, this.result(call, `Successfully replaced text in ${path}.`)];
  }

  /** A whole turn: a request, 1–4 tool steps, a closing reply. `topic` defaults to a random one. */
  turn(topic = this.topic(), request?: string): PiMessage[] {
    const r = this.#random;
    const preference = r.chance(0.1) ? ` ${r.pick(PREFERENCES)(topic, r.pick(NOUNS))}` : "";
    const messages: PiMessage[] = [this.user(request ?? `Please ${r.pick(VERBS)} the ${topic} ${r.pick(NOUNS)}.${preference} ${this.sentences(0, 2)}`.trim())];
    const steps = r.int(1, 4);
    for (let s = 0; s < steps; s++) {
      const [call, result] = this.toolStep(r.chance(0.7) ? topic : this.topic());
      messages.push(this.assistant(r.chance(0.6) ? this.sentences(1, 2) : "", [call]), result);
    }
    const choice = r.chance(0.08) ? ` ${r.pick(CHOICES_MADE)(topic, r.pick(NOUNS))}` : "";
    messages.push(this.assistant(`${this.sentences(2, 5)}${choice}`));
    return messages;
  }
}
