/**
 * A local HTTP server for testing model-summarizer plugins (node:http on port 0): records every request and answers each
 * with the next scripted reply, so tests check what was sent and inject errors and timeouts.
 */
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readRequest, type RecordedRequest } from "./http-requests.js";

export type { RecordedRequest } from "./http-requests.js";

/** One answer: a status, headers and a body (objects are sent as JSON), or no answer at all. */
export type Reply =
  | { readonly status?: number; readonly headers?: Readonly<Record<string, string>>; readonly body?: unknown }
  | { readonly hang: true };

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Resolves when the next request has arrived. */
  nextRequest(): Promise<RecordedRequest>;
  close(): Promise<void>;
}

/**
 * Starts a server answering request n with `replies(request, n)`, or with `replies[n]` (the last
 * entry repeats).
 */
export async function startModelServer(replies: readonly Reply[] | ((request: RecordedRequest, index: number) => Reply)): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const waiting: Array<(request: RecordedRequest) => void> = [];
  const server: Server = createServer((req, res) => {
    readRequest(req, (request) => {
      const index = requests.length;
      requests.push(request);
      for (const resolve of waiting.splice(0)) resolve(request);
      const reply = typeof replies === "function" ? replies(request, index) : (replies[Math.min(index, replies.length - 1)] ?? {});
      if ("hang" in reply) return;
      const payload = reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    nextRequest: () => new Promise((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
