/**
 * Background compaction in pi's real runtime, shared by the tests for pi 0.73.1 and 0.87.1: a copy
 * of a real session, the extension with a safeguard preset whose summaries come from the real
 * model summarizer (`summarizer-openai`) against a local server that holds each one until the test
 * lets it answer, and pi's faux model for the agent. The window is sized from the context the
 * session holds after one prompt (`measureAfterPrompt`), so the end of that turn is past the
 * prepare mark and a second, larger prompt takes the context past pi's own threshold.
 */
import { createCompactor, type PiMessage } from "@compaction/core";
import { type HeldModelServer, startHeldModelServer } from "@compaction/core/testing";
import { buildContext, compactionAnchor, type SessionEntry } from "@compaction/transcript";
import { expect } from "vitest";
import { PI_DEFAULT_RESERVE_TOKENS } from "../background-compaction.js";
import { compactionExtension } from "../extension.js";
import type { PiCompactionOptions } from "../options.js";
import type { ExtensionFactory } from "../pi-types.js";
import { collectReports, copyFixture, type Reports, type SessionDir } from "./pi-session.js";

export const FIRST_PROMPT = "What did we change in the theme loader?";
/** A second prompt of about `tokens` tokens (chars/4) of distinct lines. */
export function notesPrompt(tokens: number): string {
  const lines = Math.ceil((4 * tokens) / 80);
  return `Review these notes and tell me which apply to the theme loader:\n${Array.from({ length: lines }, (_, i) => `note ${i}: the loader reads theme-${i}.json and falls back to the default palette`).join("\n")}`;
}

/** The second prompt of the scenarios that compact by hand: about 6,000 tokens. */
export const SECOND_PROMPT = notesPrompt(6_000);

/** What the scenarios use of a pi runtime (0.73.1's and 0.87.1's have these members). */
export interface PiRuntime {
  readonly session: {
    prompt(text: string): Promise<void>;
    compact(customInstructions?: string): Promise<{ summary: string; firstKeptEntryId: string; details?: unknown }>;
  };
  readonly sessions: { getBranch(): unknown[]; branch(entryId: string): void };
  readonly faux: { readonly state: { readonly callCount: number } };
  dispose(): void;
}

/**
 * Starts pi over `session` with a faux model of `contextWindow` tokens and the extension; with
 * `overflowSecond`, pi's auto-compaction is on and the model refuses the second request as too
 * long (then answers), so pi compacts by its overflow recovery and retries the turn.
 */
export type StartRuntime = (session: SessionDir, options: { contextWindow: number; extension: ExtensionFactory; overflowSecond: boolean }) => Promise<PiRuntime>;

/** What a provider says when a request is too long (pi recognises it as a context overflow). */
export const OVERFLOW_ERROR = "prompt is too long: 280000 tokens > 200000 maximum";

/** One scenario's pieces, to dispose with `end()`. */
export class BackgroundScenario {
  readonly #start: StartRuntime;
  readonly #sessions: SessionDir[] = [];
  readonly #runtimes: PiRuntime[] = [];
  #server: HeldModelServer | undefined;

  constructor(start: StartRuntime) {
    this.#start = start;
  }

  /** The summary model (started on first use). */
  async server(): Promise<HeldModelServer> {
    this.#server ??= await startHeldModelServer({ answerAfterMs: 20_000 });
    return this.#server;
  }

  /** A copy of the real session whose `.compactionrc` summarises with the held model. */
  async sessionCopy(): Promise<SessionDir> {
    const server = await this.server();
    const session = copyFixture();
    this.#sessions.push(session);
    session.config({ tokenizer: { counter: "estimate" }, preset: "safeguard", plugins: [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0, maxInputTokens: 500_000 }]] });
    return session;
  }

  async runtime(session: SessionDir, contextWindow: number, options: PiCompactionOptions & { overflowSecond?: boolean } = {}): Promise<{ runtime: PiRuntime; reports: Reports }> {
    const reports = collectReports();
    const { overflowSecond = false, ...extensionOptions } = options;
    // What pi sends is not pruned here, so its usage figure is the whole context, the same at every run.
    const extension = compactionExtension({ report: reports.report, pruneContext: false, ...extensionOptions }) as unknown as ExtensionFactory;
    const runtime = await this.#start(session, { contextWindow, extension, overflowSecond });
    this.#runtimes.push(runtime);
    return { runtime, reports };
  }

  /**
   * The context's size (as the extension measures it: pi's usage figure plus what follows) after
   * the first prompt, on a copy of its own with a window too large for anything to be prepared; and
   * the window that puts it between the prepare mark and pi's threshold, 2,000 tokens under it.
   */
  async windowAfterPrompt(): Promise<{ window: number; tokens: number }> {
    const session = await this.sessionCopy();
    const { runtime } = await this.runtime(session, 2_000_000);
    await runtime.session.prompt(FIRST_PROMPT);
    const tokens = await contextTokens(session, runtime);
    return { window: tokens + 2_000 + PI_DEFAULT_RESERVE_TOKENS, tokens };
  }

  async end(): Promise<void> {
    for (const runtime of this.#runtimes.splice(0)) runtime.dispose();
    for (const session of this.#sessions.splice(0)) session.remove();
    await this.#server?.close();
  }
}

/** The context's size as the extension measures it. */
export async function contextTokens(session: SessionDir, runtime: PiRuntime): Promise<number> {
  const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
  try {
    const context = buildContext(runtime.sessions.getBranch() as SessionEntry[]);
    return compactor.tokens.contextTokens(context.messages, compactionAnchor(context)).tokens;
  } finally {
    compactor.dispose();
  }
}

/** Resolves once `condition` holds (checked every 10 ms, for at most 10 s). */
export async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition(), what).toBe(true);
}

/**
 * The first prompt, its compaction prepared at the end of the turn and written while the agent goes
 * on (the second prompt, `second`); returns the summary requests the preparation made.
 */
export async function prepareDuringSecondPrompt(runtime: PiRuntime, reports: Reports, server: HeldModelServer, second = SECOND_PROMPT): Promise<number> {
  const asked = server.requests.length;
  await runtime.session.prompt(FIRST_PROMPT);
  await until(() => server.requests.length > asked, "the end of the first turn asked the summary model for the prepared compaction");
  expect(reports.of("info").some((message) => message.startsWith("compaction: preparing pi's next compaction in the background"))).toBe(true);
  // The model is writing the summary: the agent goes on meanwhile.
  const prompt = runtime.session.prompt(second);
  server.release();
  await prompt;
  await until(() => reports.of("info").some((message) => message.startsWith("compaction: the compaction prepared in the background is ready")), "the prepared compaction is ready");
  server.hold();
  return server.requests.length - asked;
}

/** The numbers of the held summaries a summary quotes (the server numbers each answer). */
export function summariesIn(summary: string): number[] {
  return [...summary.matchAll(/held summary (\d+)/g)].map((match) => Number(match[1]));
}

/** The context after the compaction: the prepared summary, then the kept messages and every one appended since (the second prompt and its answer). */
export function expectPreparedInPlace(runtime: PiRuntime, summary: string): void {
  const context = buildContext(runtime.sessions.getBranch() as SessionEntry[]);
  const messages = context.messages as unknown as Array<{ role: string; summary?: string; content?: unknown }>;
  expect(messages[0]).toMatchObject({ role: "compactionSummary", summary });
  const users = messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
  const newest = SECOND_PROMPT.slice(SECOND_PROMPT.lastIndexOf("\n") + 1);
  expect(users.some((text) => text.includes(newest))).toBe(true);
  expect(messages.at(-1)).toMatchObject({ role: "assistant" });
}
