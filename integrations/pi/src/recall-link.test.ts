import { type Compactor, createCompactor, type PiMessage } from "@compaction/core";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecallLink } from "./recall-link.js";
import { asReadonlySessionManager, copyFixture, openSession, type SessionDir } from "./test-support/pi-session.js";

type SessionManager = ExtensionContext["sessionManager"];

/** The two ExtensionAPI methods the link uses; `allowlist` stands for pi's tool allowlist. */
function fakePi(allowlist?: readonly string[]) {
  const registered: string[] = [];
  const pi: Pick<ExtensionAPI, "registerTool" | "getActiveTools"> = {
    registerTool: (tool) => void registered.push(tool.name),
    getActiveTools: () => registered.filter((name) => allowlist === undefined || allowlist.includes(name)),
  };
  return { pi, registered };
}

let session: SessionDir;
let sessions: SessionManager;
const compactors: Compactor<PiMessage>[] = [];

async function compactorWith(preset: string): Promise<Compactor<PiMessage>> {
  const dir = copyFixture();
  dir.config({ preset, tokenizer: { counter: "estimate" } });
  const compactor = await createCompactor<PiMessage>({ cwd: dir.dir, adapter: "pi" });
  dir.remove();
  compactors.push(compactor);
  return compactor;
}

beforeAll(() => {
  session = copyFixture();
  sessions = asReadonlySessionManager(openSession(session)); // upgrades the copy to version 3, as pi does
});
afterAll(() => {
  for (const compactor of compactors) compactor.dispose();
  session.remove();
});

describe("RecallLink", () => {
  it("does nothing for a preset without recall", async () => {
    const { pi, registered } = fakePi();
    expect(await new RecallLink(pi).ensure(await compactorWith("safeguard"), sessions)).toEqual({ state: "none" });
    expect(registered).toEqual([]);
  });

  it("opens the session's index and registers memory_search for the rolling preset", async () => {
    const { pi, registered } = fakePi();
    const link = new RecallLink(pi);
    const status = await link.ensure(await compactorWith("rolling"), sessions);
    expect(status.state).toBe("connected");
    expect(registered).toEqual(["memory_search"]);
    if (status.state === "connected") {
      const hits = await status.connection.index.search("theme selector", { limit: 3 });
      expect(hits.length).toBeGreaterThan(0);
    }
    await link.close();
  });

  it("connects once per session file", async () => {
    const { pi, registered } = fakePi();
    const link = new RecallLink(pi);
    const compactor = await compactorWith("rolling");
    await link.ensure(compactor, sessions);
    await link.ensure(compactor, sessions);
    expect(registered).toEqual(["memory_search"]);
    await link.close();
  });

  it("says the tool is unavailable when pi's allowlist leaves it out", async () => {
    const { pi } = fakePi(["read", "bash"]);
    const link = new RecallLink(pi);
    const status = await link.ensure(await compactorWith("rolling"), sessions);
    expect(status).toMatchObject({ state: "unavailable", toolName: "memory_search", reason: expect.stringMatching(/allowlist/) });
    await link.close();
  });

  it("says the tool is unavailable for a session with no file", async () => {
    const { pi, registered } = fakePi();
    const inMemory = { getSessionFile: () => undefined, getLeafId: () => null } as unknown as SessionManager;
    const status = await new RecallLink(pi).ensure(await compactorWith("rolling"), inMemory);
    expect(status).toMatchObject({ state: "unavailable", reason: expect.stringMatching(/no file on disk/) });
    expect(registered).toEqual([]);
  });
});
