import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isTranscriptError } from "./transcript-error.js";
import { detectTranscriptFormat, TRANSCRIPT_ADAPTERS } from "./detect-format.js";
import { tmpSessionDir } from "./test-support/pi-sessions.js";
import { thrown } from "./test-support/thrown.js";

const REAL = fileURLToPath(new URL("../../../shared/fixtures/real/", import.meta.url));
const CODEX = fileURLToPath(new URL("./__fixtures__/codex-rollout.jsonl", import.meta.url));
const CODEX_LEGACY = fileURLToPath(new URL("./__fixtures__/codex-rollout-legacy.jsonl", import.meta.url));

describe("detectTranscriptFormat", () => {
  const dir = tmpSessionDir();
  afterAll(() => dir.cleanup());

  it.each([
    ["pi-large-session.jsonl", "pi"],
    ["pi-before-compaction.jsonl", "pi"],
    ["claude-code-log-37f83ec9.jsonl", "claude-code"],
    ["claude-code-viewer-fe5e1c67.jsonl", "claude-code"],
    ["claude-code-log-fe869ecb.jsonl", "claude-code"],
    ["claude-code-me-next-9e953218.jsonl", "claude-code"],
    ["claude-code-soundrecorder-7acd37a8.jsonl", "claude-code"],
    ["claude-code-entire-review-847ff7d2.jsonl", "claude-code"],
    ["claude-code-entire-attribution-6113e919.jsonl", "claude-code"],
    ["claude-code-entire-openclaw-ca8cc13b.jsonl", "claude-code"],
    ["codex-pomodoro-example.jsonl", "codex"],
  ] as const)("names the real %s as %s", (file, format) => {
    expect(detectTranscriptFormat(`${REAL}${file}`)).toBe(format);
  });

  it("names a Codex rollout as codex", () => {
    expect(detectTranscriptFormat(CODEX)).toBe("codex");
  });

  it("names a legacy Codex rollout (before session_meta) as codex", () => {
    expect(detectTranscriptFormat(CODEX_LEGACY)).toBe("codex");
  });

  it("names a file whose pi header is cut short as pi, so pi's reader reports the header", () => {
    expect(detectTranscriptFormat(dir.file("cut.jsonl", '{"type":"session","id":"abc","timest\n'))).toBe("pi");
  });

  it("refuses a directory as unreadable, saying it is a directory", () => {
    const error = thrown(() => detectTranscriptFormat(dir.file("x.jsonl", "").replace(/x\.jsonl$/, "")));
    expect(isTranscriptError(error) && error.code).toBe("COMPACTION_TRANSCRIPT_INVALID");
    expect((error as Error).message).toContain("it is a directory");
  });

  it("maps each format to the adapter its messages need", () => {
    expect(TRANSCRIPT_ADAPTERS).toEqual({ pi: "pi", "claude-code": "anthropic", codex: "openai" });
  });

  it("reads past a first line longer than its first read", () => {
    const big = JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2025-01-01T00:00:00.000Z", note: "x".repeat(200_000) });
    expect(detectTranscriptFormat(dir.file("big.jsonl", `${big}\n`))).toBe("pi");
  });

  it("skips lines that are not JSON objects before a telling one", () => {
    const text = `not json\n[1,2]\n${JSON.stringify({ type: "summary", summary: "title", leafUuid: "u1" })}\n`;
    expect(detectTranscriptFormat(dir.file("claude.jsonl", text))).toBe("claude-code");
  });

  it("refuses a file that is no transcript, naming the file and what it found", () => {
    const path = dir.file("notes.jsonl", `${JSON.stringify({ hello: "world" })}\n`);
    const error = thrown(() => detectTranscriptFormat(path));
    expect(isTranscriptError(error) && error.code).toBe("COMPACTION_TRANSCRIPT_INVALID");
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('{"hello":"world"}');
  });

  it("refuses an empty file as empty", () => {
    const path = dir.file("empty.jsonl", "");
    expect((thrown(() => detectTranscriptFormat(path)) as Error).message).toContain("is empty");
  });

  it("refuses a missing file as unreadable", () => {
    const error = thrown(() => detectTranscriptFormat(`${REAL}no-such-file.jsonl`));
    expect(isTranscriptError(error) && error.code).toBe("COMPACTION_TRANSCRIPT_INVALID");
  });
});
