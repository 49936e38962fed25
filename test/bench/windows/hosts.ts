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
import { createContextManager } from "@compaction/context-manager";
import { type AiSdkCompactionEvent, compactionPrepareStep, compactModelMessages, createAiSdkAdapter } from "@compaction/ai-sdk";
import { fromPiMessages } from "@compaction/ai-sdk/thread";
import { createCompactor, createPiAdapter, FactsCache, MessageTokenCounter, type MessageFacts, type PiMessage, type TokenCounter } from "@compaction/core";
import { contextManagerPolicy, type ReplayPolicy } from "@compaction/replay";
import type { ModelMessage } from "ai";

export type HostName = "cm" | "ai-sdk";

/** What a host told its listeners during one replay (or one series of compactions at once). */
export class HostLog {
  compactions = 0;
  attempts = 0;
  /** Attempts (by number) that failed, and why: a status, an error, a warning. */
  readonly failed = new Map<number, string>();

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
          manager.on("warning", (event) => {
            if (event.kind === "cannot-free" || event.kind === "shape-failed") log.fail(`${event.kind}: ${event.message}`);
          });
          manager.on("error", (event) => log.fail(`error during ${event.during}: ${event.error.message}`));
        },
      }),
    async atOnce(cwd, window, history, log) {
      const manager = await createContextManager<PiMessage>({ cwd, contextWindow: window, messages: history });
      manager.on("compaction-start", () => log.start());
      manager.on("compaction-end", (event) => {
        if (event.result.status === "failed") log.fail(`failed: ${event.result.reason ?? "no reason"}`);
        if (event.result.status === "compacted") log.compactions += 1;
      });
      manager.on("warning", (event) => {
        if (event.kind === "cannot-free" || event.kind === "shape-failed") log.fail(`${event.kind}: ${event.message}`);
      });
      manager.on("error", (event) => log.fail(`error during ${event.during}: ${event.error.message}`));
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

/** The AI SDK's events into the log: every warning after a compaction started is a failure of it. */
function listen(log: HostLog, event: AiSdkCompactionEvent): void {
  if (event.type === "compaction-start") log.start();
  else if (event.type === "compaction-end") {
    if (event.result.status === "compacted") log.compactions += 1;
    if (event.result.status === "failed") log.fail(`failed: ${event.result.reason ?? "no reason"}`);
  } else if (log.attempts > 0) log.fail(`warning${event.code === null ? "" : ` ${event.code}`}: ${event.message}`);
}
