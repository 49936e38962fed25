/**
 * A model summary that takes as long as a test says: a local OpenAI-compatible chat-completions
 * server (node:http on 127.0.0.1, port 0) that holds every request until `release()`, so a test of
 * background compaction decides when a summary is written, and sees when each was asked for. The
 * real model-summarizer code (`summarizer-openai` with `baseUrl`) calls it over HTTP, in the test's
 * process or in a host's own (OpenClaw's Gateway). With `answerAfterMs`, a held request is answered
 * on its own after that long, so a host that waits for a summary it should not need makes the
 * test's assertions fail instead of hanging it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chatCompletion, readRequest, type RecordedRequest } from "./http-requests.js";

export interface HeldModelServerOptions {
  /** Answer a held request on its own after this many ms (real time). Default: only `release()` answers. */
  readonly answerAfterMs?: number;
}

export interface HeldModelServer {
  /** `http://127.0.0.1:<port>/v1`: the summarizer's `baseUrl`. */
  readonly baseUrl: string;
  /** Every held (summary) request, in the order they arrived, with the time they arrived. */
  readonly requests: RecordedRequest[];
  /** Requests waiting for their answer. */
  readonly pending: number;
  /** Resolves at the next held request's arrival. */
  arrival(): Promise<RecordedRequest>;
  /** Answers every held request, and every later one at once until `hold()`. */
  release(): void;
  /** Holds requests again from now. */
  hold(): void;
  close(): Promise<void>;
}

/** The summary a held request is answered with: its number and the start of the conversation it was given. */
export function heldSummaryText(index: number, body: any): string {
  const user = Array.isArray(body?.messages) ? String(body.messages.find((m: { role?: string }) => m.role === "user")?.content ?? "") : "";
  const first = user.split("\n").find((line) => line.trim() !== "" && !line.startsWith("<") && !line.startsWith("#"))?.trim() ?? "the task";
  return `## Goal\n- ${first.slice(0, 160)}\n\n## Progress\n- held summary ${index + 1}`;
}

export async function startHeldModelServer(options: HeldModelServerOptions = {}): Promise<HeldModelServer> {
  const requests: RecordedRequest[] = [];
  const held = new Set<() => void>();
  const waiting: Array<(request: RecordedRequest) => void> = [];
  let free = false;
  const server: Server = createServer((req, res) => {
    readRequest(req, (request, rawChars) => {
      const send = (text: string) => {
        if (res.writableEnded) return;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(chatCompletion(text, rawChars, "held-model")));
      };
      const index = requests.length;
      requests.push(request);
      for (const resolve of waiting.splice(0)) resolve(request);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const answer = () => {
        clearTimeout(timer);
        held.delete(answer);
        send(heldSummaryText(index, request.body));
      };
      if (free) return answer();
      held.add(answer);
      if (options.answerAfterMs !== undefined) timer = setTimeout(answer, options.answerAfterMs);
      // A request the client gave up on (an aborted summary) is no longer held.
      res.on("close", () => {
        clearTimeout(timer);
        held.delete(answer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get pending() {
      return held.size;
    },
    arrival: () => new Promise((resolve) => waiting.push(resolve)),
    release: () => {
      free = true;
      for (const answer of [...held]) answer();
    },
    hold: () => {
      free = false;
    },
    close: () =>
      new Promise((resolve) => {
        for (const answer of [...held]) answer();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
