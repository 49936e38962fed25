/**
 * A local OpenAI-compatible chat-completions server whose every answer takes `latencyMs` of
 * simulated time: the real model-summarizer code (@compaction/plugin-summarizer-openai) calls it
 * over HTTP, and the replay decides when each answer goes out, from its own clock. A request that
 * arrives at simulated time t is due at t + latency; `release` sends the answers due by a time.
 *
 * The summary it writes is the same in every mode (blocking or background), so the replay
 * compares when compactions happen, not how well a model writes: a Goal line and the newest lines
 * of the conversation it was given, up to the `max_tokens` asked for (chars / 4).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { chatCompletion, readRequest } from "@compaction/core/testing";
import { HeldCalls, type ModelGate } from "@compaction/replay";

export class TimedModelServer implements ModelGate {
  readonly #server: Server;
  readonly #held = new HeldCalls();
  /** The simulated time a request arriving now arrived at (the replay's clock, or the end of the answer before it). */
  arrivalTime = 0;
  latencyMs = 0;
  /** Requests received and the characters of their prompts (what the summarizer's input cost, answered or not). */
  arrivals = 0;
  promptChars = 0;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<TimedModelServer> {
    let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
    const server = createServer((req, res) => handle(req, res));
    const self = new TimedModelServer(server);
    handle = (req, res) => self.#handle(req, res);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return self;
  }

  /** `http://127.0.0.1:<port>/v1`, the summarizer's baseUrl. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Requests waiting for their answer. */
  get pending(): number {
    return this.#held.pending;
  }

  /** When the earliest held answer is due, or null. */
  get nextDue(): number | null {
    return this.#held.nextDue;
  }

  /** Sends the earliest held answer; returns its due time, or null when none is held. */
  releaseNext(): number | null {
    return this.#held.releaseNext();
  }

  /** Resolves at the next request's arrival. */
  arrival(): Promise<void> {
    return this.#held.arrival();
  }

  /** Answers every held request (a cell ended with one in flight) and starts the counts again. */
  reset(): void {
    this.#held.releaseAll();
    this.arrivals = 0;
    this.promptChars = 0;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    readRequest(req, (request) => {
      const body = request.body as { messages?: Array<{ role: string; content: string }>; max_tokens?: number; max_completion_tokens?: number };
      const prompt = (body.messages ?? []).map((m) => m.content).join("\n");
      const user = body.messages?.find((m) => m.role === "user")?.content ?? "";
      const maxChars = 4 * (body.max_tokens ?? body.max_completion_tokens ?? 1000);
      const due = this.arrivalTime + this.latencyMs;
      this.arrivals += 1;
      this.promptChars += prompt.length;
      this.#held.hold(due, () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(chatCompletion(summaryOf(user, maxChars), prompt.length, "bench-model")));
      });
    });
  }
}

/** A Goal line, then the newest lines of the conversation that fit `maxChars`. */
function summaryOf(conversation: string, maxChars: number): string {
  const lines = conversation.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("<") && !line.startsWith("#"));
  const goal = (lines[0] ?? "continue the task").slice(0, 200);
  const kept: string[] = [];
  let room = Math.max(200, maxChars - goal.length - 40);
  for (let i = lines.length - 1; i > 0 && room > 0; i--) {
    const line = (lines[i] as string).slice(0, 300);
    if (line.length + 3 > room) break;
    kept.unshift(`- ${line}`);
    room -= line.length + 3;
  }
  return `## Goal\n- ${goal}\n\n## Progress\n${kept.join("\n") || "- (nothing yet)"}`;
}
