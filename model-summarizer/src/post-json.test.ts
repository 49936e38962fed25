import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ModelCallError } from "./model-call-error.js";
import { postJson } from "./post-json.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server | undefined;

async function serve(handler: Handler): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => handler(req, body, res));
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const errorMessage = (body: unknown) => (body as { error?: { message?: string } }).error?.message;

describe("postJson", () => {
  it("POSTs the body as JSON with the headers and resolves to the parsed answer", async () => {
    let seen: { method?: string; url?: string; auth?: string; type?: string; body?: unknown } = {};
    const base = await serve((req, body, res) => {
      seen = { method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers["content-type"], body: JSON.parse(body) };
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: true }));
    });
    const answer = await postJson({ url: `${base}/v1/x`, headers: { authorization: "Bearer t", "content-type": "application/json" }, body: { a: 1 } });
    expect(answer).toEqual({ ok: true });
    expect(seen).toEqual({ method: "POST", url: "/v1/x", auth: "Bearer t", type: "application/json", body: { a: 1 } });
  });

  it("reports an error status with the server's message, Retry-After and whether to retry", async () => {
    const base = await serve((_req, _body, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
      res.end(JSON.stringify({ error: { message: "slow down" } }));
    });
    const error = (await postJson({ url: base, headers: {}, body: {}, errorMessage }).catch((e: unknown) => e)) as ModelCallError;
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ status: 429, serverMessage: "slow down", retryable: true, retryAfterMs: 2000 });
    expect(error.message).toBe("HTTP 429 Too Many Requests");
  });

  it("quotes a body that is not JSON and does not retry a 4xx", async () => {
    const base = await serve((_req, _body, res) => {
      res.writeHead(404);
      res.end("no such route");
    });
    const error = await postJson({ url: base, headers: {}, body: {}, errorMessage }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, serverMessage: "no such route", retryable: false });
  });

  it("follows the server's x-should-retry header", async () => {
    const base = await serve((_req, _body, res) => {
      res.writeHead(500, { "x-should-retry": "false" });
      res.end("{}");
    });
    expect(await postJson({ url: base, headers: {}, body: {} }).catch((e: unknown) => e)).toMatchObject({ status: 500, retryable: false });
  });

  it("rejects a 200 answer that is not JSON, without retrying", async () => {
    const base = await serve((_req, _body, res) => res.end("<html>proxy</html>"));
    const error = await postJson({ url: base, headers: {}, body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ status: 200, retryable: false, message: expect.stringContaining("not JSON: <html>proxy</html>") });
  });

  it("reports a refused connection as a retryable network error", async () => {
    const base = await serve(() => undefined);
    server?.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
    const error = await postJson({ url: base, headers: {}, body: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ retryable: true, status: undefined, message: expect.stringMatching(/could not reach the server.*ECONNREFUSED/) });
  });

  it("rejects with the signal's reason when it aborts", async () => {
    const base = await serve(() => undefined);
    const controller = new AbortController();
    const pending = postJson({ url: base, headers: {}, body: {}, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("stopped")), 20);
    await expect(pending).rejects.toThrow("stopped");
  });
});
