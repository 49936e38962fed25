import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { readSession } from "./parse.js";
import {
  createSession,
  createSessionId,
  findMostRecentSession,
  resolveSession,
  sessionDirForCwd,
  sessionFileName,
  sessionsBaseDir,
} from "./session-file.js";
import { rejection } from "@compaction/core/testing";

const dir = mkdtempSync(join(tmpdir(), "compaction-session-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** A session file with this id in `folder`, modified `ageMs` ago. */
function sessionIn(folder: string, id: string, ageMs = 0): string {
  mkdirSync(folder, { recursive: true });
  const path = join(folder, sessionFileName(id, "2026-01-01T00:00:00.000Z"));
  writeFileSync(path, `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/p" })}\n`);
  const time = new Date(Date.now() - ageMs);
  utimesSync(path, time, time);
  return path;
}

describe("createSession", () => {
  it("writes a version 3 header and the entries as a chain from a root", async () => {
    const path = join(dir, "new", "session.jsonl");
    const created = await createSession(path, { cwd: "/work/app", parentSession: "/old.jsonl" }, [
      { type: "message", message: { role: "user", content: "hello", timestamp: 1 } },
      { type: "model_change", provider: "openai", modelId: "gpt-5" },
    ]);
    const read = readSession(path);
    expect(read.header).toEqual(created.header);
    expect(read.header).toMatchObject({ type: "session", version: 3, cwd: "/work/app", parentSession: "/old.jsonl" });
    expect(read.entries).toEqual(created.entries);
    expect(read.entries.map((e) => e.parentId)).toEqual([null, created.entries[0]?.id]);
    expect(readFileSync(path, "utf8").endsWith("}\n")).toBe(true);
  });

  it("uses the id it is given", async () => {
    const created = await createSession(join(dir, "given-id.jsonl"), { cwd: "/p", id: "my-session" });
    expect(created.header.id).toBe("my-session");
  });

  it("refuses to replace an existing file", async () => {
    const path = join(dir, "exists.jsonl");
    writeFileSync(path, "keep me\n");
    expect((await rejection(createSession(path, { cwd: "/p" }))).code).toBe(ErrorCodes.INPUT_INVALID);
    expect(readFileSync(path, "utf8")).toBe("keep me\n");
  });
});

describe("createSessionId", () => {
  it("makes a UUID version 7 whose first 48 bits are the time in ms", () => {
    const id = createSessionId(0x0123_4567_89ab);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.replace(/-/g, "").slice(0, 12)).toBe("0123456789ab");
  });
});

describe("session folders", () => {
  it("encodes the cwd as pi does: separators and colons as dashes, between double dashes", () => {
    expect(sessionDirForCwd("/home/dev/my-app", { sessionsDir: "/s" })).toBe(join("/s", "--home-dev-my-app--"));
    expect(sessionDirForCwd("C:\\work\\app", { sessionsDir: "/s" })).toBe(join("/s", "--C--work-app--"));
  });

  it("takes the base folder from the option, then COMPACTION_SESSIONS_DIR, then PI_CODING_AGENT_DIR, then ~/.pi/agent", () => {
    const env = { COMPACTION_SESSIONS_DIR: "/from-env", PI_CODING_AGENT_DIR: "/pi-agent" };
    expect(sessionsBaseDir({ sessionsDir: "/option", env })).toBe(resolve("/option"));
    expect(sessionsBaseDir({ env })).toBe(resolve("/from-env"));
    expect(sessionsBaseDir({ env: { PI_CODING_AGENT_DIR: "/pi-agent" } })).toBe(join("/pi-agent", "sessions"));
    expect(sessionsBaseDir({ env: {} })).toBe(join(homedir(), ".pi", "agent", "sessions"));
  });
});

describe("findMostRecentSession", () => {
  it("returns the most recently modified session file, passing over files that are not sessions", async () => {
    const folder = join(dir, "recent");
    sessionIn(folder, "older", 60_000);
    const newest = sessionIn(folder, "newer", 1_000);
    writeFileSync(join(folder, "notes.jsonl"), '{"not":"a session"}\n');
    expect(await findMostRecentSession(folder)).toBe(newest);
  });

  it("returns null for a folder that does not exist", async () => {
    expect(await findMostRecentSession(join(dir, "nowhere"))).toBeNull();
  });
});

describe("resolveSession", () => {
  const base = join(dir, "sessions");
  const cwd = "/home/dev/app";
  const here = sessionDirForCwd(cwd, { sessionsDir: base });
  const first = sessionIn(here, "0198aaaa-1111-7000-8000-000000000001", 60_000);
  const second = sessionIn(here, "0198aaaa-2222-7000-8000-000000000002", 1_000);
  const elsewhere = sessionIn(sessionDirForCwd("/home/dev/other", { sessionsDir: base }), "0198bbbb-3333-7000-8000-000000000003");
  const options = { cwd, sessionsDir: base };

  it("returns an existing path as an absolute path", async () => {
    expect(await resolveSession(first, options)).toBe(first);
  });

  it("finds a session by its full id or by the start of it", async () => {
    expect(await resolveSession("0198aaaa-2222-7000-8000-000000000002", options)).toBe(second);
    expect(await resolveSession("0198aaaa-1", options)).toBe(first);
  });

  it("looks in the other projects' folders when the cwd's has no match", async () => {
    expect(await resolveSession("0198bbbb", options)).toBe(elsewhere);
  });

  it("returns the cwd's most recent session when given nothing", async () => {
    expect(await resolveSession(undefined, options)).toBe(second);
  });

  it("refuses a prefix that matches several sessions, listing them", async () => {
    const error = await rejection(resolveSession("0198aaaa", options));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
    expect(error.message).toContain(first);
    expect(error.message).toContain(second);
  });

  it("fails with COMPACTION_TRANSCRIPT_NOT_FOUND naming every folder it searched", async () => {
    const error = await rejection(resolveSession("ffff", options));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
    expect(error.message).toContain(here);
    expect(error.message).toContain(sessionDirForCwd("/home/dev/other", { sessionsDir: base }));
  });

  it("fails for a path that does not exist without searching by id", async () => {
    const error = await rejection(resolveSession("./missing/session.jsonl", options));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
    expect(error.message).toBe(`No session file at ${resolve("./missing/session.jsonl")}.`);
  });
});
