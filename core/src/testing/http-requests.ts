/**
 * What the local model servers for tests share (model-server.ts, held-model-server.ts and the
 * background benchmark's timed one): reading a request as it arrived, and the OpenAI
 * chat-completions answer they send.
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (or the raw text when it is not JSON). */
  readonly body: any;
  /** When the request arrived (Date.now()). */
  readonly at: number;
}

/** Reads `req` to its end and gives it to `then` as recorded, with the raw body's length in characters. */
export function readRequest(req: IncomingMessage, then: (request: RecordedRequest, rawChars: number) => void): void {
  let raw = "";
  req.on("data", (chunk: Buffer) => (raw += chunk.toString("utf8")));
  req.on("end", () => {
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep the raw text
    }
    then({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, at: Date.now() }, raw.length);
  });
}

/** An OpenAI chat-completions answer of `text` from `model`, its usage counted at four characters a token. */
export function chatCompletion(text: string, promptChars: number, model: string) {
  const prompt = Math.ceil(promptChars / 4);
  const out = Math.ceil(text.length / 4);
  return {
    id: `chatcmpl-${model}`,
    object: "chat.completion",
    created: 1767225600,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out },
  };
}
