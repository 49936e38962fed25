/**
 * The two hosts the windows benchmark replays every transcript through, each as a host runs it
 * with nothing but the project's `.compactionrc.json`:
 * - the context manager (@compaction/context-manager, through the replay's `contextManagerPolicy`):
 *   messages appended, `check()` before each model call, `requestMessages()` sent; at once, a
 *   manager opened on the history so far, checked once, its request sent;
 * - the AI SDK (@compaction/ai-sdk): `compactionPrepareStep` called at every step with the whole
 *   history as ai 6 hands it (no step usage: the replay has no provider), what it returns sent; at
 *   once, `compactModelMessages` on the history so far, as a chat route calls it.
 *
 * Each host reports what it told its listeners into a `HostLog`: compactions made, and attempts
 * that failed (a `failed` status, an error, a warning that it could not free enough room or that
 * the prompt is still over the window), with the reasons.
 */
import { type ContextErrorEvent, type ContextWarningEvent, createContextManager } from "@compaction/context-manager";
import { type AiSdkCompactionEvent, compactionPrepareStep, compactModelMessages, createAiSdkAdapter } from "@compaction/ai-sdk";
import { fromPiMessages } from "@compaction/ai-sdk/thread";
import { type CompactionError, createCompactor, createPiAdapter, ErrorCodes, FactsCache, MessageTokenCounter, type MessageFacts, type PiMessage, type TokenCounter } from "@compaction/core";
import { contextManagerPolicy, type ReplayPolicy } from "@compaction/replay";
import type { ModelMessage } from "ai";

export type HostName = "cm" | "ai-sdk";

/** What a host told its listeners during one replay (or one series of compactions at once). */
export class HostLog {
  compactions = 0;
  attempts = 0;
  /** Attempts (by number) that failed, and why: a `failed` status, an error, a shaping tap that failed. */
  readonly failed = new Map<number, string>();
  /**
   * Compactions that worked but left the context over the threshold (the context manager's
   * `cannot-free` warning: the newest turn alone is larger than the target leaves it); the host
   * then waits a quarter of the window before the next. Not failures: counted apart.
   */
  overThreshold = 0;
  /** Requests that left out older messages of the context (COMPACTION_CONTEXT_TRIMMED). */
  trimmed = 0;

  start(): void {
    this.attempts += 1;
  }

  /** Marks the current attempt failed (the first reason given is kept). */
  fail(reason: string): void {
    if (!this.failed.has(this.attempts)) this.failed.set(this.attempts, reason.replace(/\s+/g, " ").slice(0, 240));
  }
}

/** One host: its message format, its count, and how it is run in a loop and at once. */
export interface Host<T> {
  readonly name: HostName;
  readonly label: string;
  /** The transcript (pi messages, one per recorded message) in the host's format, one to one. */
  messages(transcript: readonly PiMessage[], file: string): T[];
  readonly tokensOf: (message: T) => number;
  readonly factsOf: (message: T) => MessageFacts;
  /** A policy replaying one session with the project at `cwd`. */
  policy(preset: string, cwd: string, window: number, log: HostLog): ReplayPolicy<T>;
  /** What the host sends for `history` taken at once (a session resumed at this window). */
  atOnce(cwd: string, window: number, history: readonly T[], log: HostLog): Promise<readonly T[]>;
}

/** The context manager on pi messages. */
export function contextManagerHost(counter: TokenCounter): Host<PiMessage> {
  const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), counter);
  return {
    name: "cm",
    label: "context manager",
    messages: (transcript) => [...transcript],
    tokensOf: (message) => tokens.count(message),
    factsOf: (message) => tokens.facts.of(message),
    policy: (preset, cwd, window, log) =>
      contextManagerPolicy(preset, () => createCompactor<PiMessage>({ cwd }), window, {
        onOpen: (manager) => {
          manager.on("compaction-start", () => log.start());
          manager.on("compaction-end", (event) => {
            if (event.result.status === "failed") log.fail(`failed: ${event.result.reason ?? "no reason"}`);
            log.compactions = event.compactions;
          });
          manager.on("warning", (event) => warned(log, event));
          manager.on("error", (event) => errored(log, event));
        },
      }),
    async atOnce(cwd, window, history, log) {
      const manager = await createContextManager<PiMessage>({ cwd, contextWindow: window, messages: history });
      manager.on("compaction-start", () => log.start());
      manager.on("compaction-end", (event) => {
        if (event.result.status === "failed") log.fail(`failed: ${event.result.reason ?? "no reason"}`);
        if (event.result.status === "compacted") log.compactions += 1;
      });
      manager.on("warning", (event) => warned(log, event));
      manager.on("error", (event) => errored(log, event));
      try {
        await manager.check();
        return manager.requestMessages();
      } finally {
        await manager.dispose();
      }
    },
  };
}

/** The AI SDK integration on ModelMessages (the thread entry's conversion of the pi messages). */
export function aiSdkHost(counter: TokenCounter): Host<ModelMessage> {
  const tokens = new MessageTokenCounter(new FactsCache(createAiSdkAdapter()), counter);
  return {
    name: "ai-sdk",
    label: "AI SDK",
    messages: (transcript, file) => fromPiMessages(transcript, file),
    tokensOf: (message) => tokens.count(message),
    factsOf: (message) => tokens.facts.of(message),
    policy: (preset, cwd, _window, log) => ({
      name: preset,
      async open() {
        const history: ModelMessage[] = [];
        const prepareStep = compactionPrepareStep<ModelMessage>({ cwd, on: (event) => listen(log, event) });
        let stepNumber = 0;
        return {
          async append(messages) {
            history.push(...messages);
          },
          async request() {
            const prepared = await prepareStep({ messages: [...history], steps: [], stepNumber: stepNumber++ });
            return prepared.messages ?? [...history];
          },
          get compactions() {
            return log.compactions;
          },
          async close() {},
        };
      },
    }),
    atOnce: (cwd, _window, history, log) => compactModelMessages(history, { cwd, on: (event) => listen(log, event) }),
  };
}

/** The context manager's warnings into the log: one that left the context over the threshold apart, a failed shaping tap as a failure. */
function warned(log: HostLog, event: ContextWarningEvent): void {
  if (event.kind === "cannot-free") log.overThreshold += 1;
  else if (event.kind === "shape-failed") log.fail(`${event.kind}: ${event.message}`);
}

/** The context manager's errors into the log: a request that left out messages apart, anything else a failure. */
function errored(log: HostLog, event: ContextErrorEvent): void {
  if (event.during === "request" && (event.error as CompactionError).code === ErrorCodes.CONTEXT_TRIMMED) log.trimmed += 1;
  else log.fail(`error during ${event.during}: ${event.error.message}`);
}

/** The AI SDK's events into the log: a request that left out messages apart, every other warning after a compaction started a failure of it (a background step is news, not a warning). */
function listen(log: HostLog, event: AiSdkCompactionEvent): void {
  if (event.type === "compaction-start") log.start();
  else if (event.type === "compaction-end") {
    if (event.result.status === "compacted") log.compactions += 1;
    if (event.result.status === "failed") log.fail(`failed: ${event.result.reason ?? "no reason"}`);
  } else if (event.type === "background") return;
  else if (event.code === ErrorCodes.CONTEXT_TRIMMED) log.trimmed += 1;
  else if (log.attempts > 0) log.fail(`warning${event.code === null ? "" : ` ${event.code}`}: ${event.message}`);
}
