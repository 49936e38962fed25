/**
 * Real pi sessions for tests: a copy of a real fixture (version 1) in a temporary directory
 * with a `.compactionrc`, opened with pi's own SessionManager (which upgrades the copy to
 * version 3), and AgentSessions over it with pi-ai's faux provider, which counts model calls.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildContext, type SessionEntry } from "@compaction/transcript";
import { type PiMessage } from "@compaction/core";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { type FauxProviderRegistration, type FauxResponseStep, fauxAssistantMessage, registerFauxProvider } from "@mariozechner/pi-ai";
import {
  type AgentSession,
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  type ExtensionFactory as LegacyExtensionFactory,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";
// The extension is typed against today's pi (@earendil-works); pi 0.73.1 (@mariozechner) hands it
// the same shapes at run time, so its objects are cast once here, at the boundary.
import type { ExtensionContext, ExtensionFactory, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";

type ReadonlySessionManager = ExtensionContext["sessionManager"];
import type { PiReport } from "../options.js";

/** The fixture the tests use (see ../shared/fixtures/real/PROVENANCE.md). */
export const LARGE_SESSION = "pi-large-session.jsonl";

export interface SessionDir {
  readonly dir: string;
  /** The copied session file. */
  readonly file: string;
  /** Writes `.compactionrc.json` in the directory. */
  config(config: Record<string, unknown>): void;
  remove(): void;
}

/** A temporary directory holding a copy of a real fixture (the fixture itself is never touched). */
export function copyFixture(fixture = LARGE_SESSION): SessionDir {
  const dir = mkdtempSync(join(tmpdir(), "compaction-pi-"));
  const file = join(dir, "session.jsonl");
  copyFileSync(join(FIXTURES_DIR, fixture), file);
  return {
    dir,
    file,
    config: (config) => writeFileSync(join(dir, ".compactionrc.json"), JSON.stringify(config)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** pi's SessionManager over the copy, with `dir` as the working directory; upgrades the copy to version 3. */
export function openSession(session: SessionDir): SessionManager {
  return SessionManager.open(session.file, undefined, session.dir);
}

/** Messages for the user, as the extension reported them. */
export interface Reports {
  readonly report: PiReport;
  readonly all: Array<{ level: string; message: string }>;
  of(level: string): string[];
}

export function collectReports(): Reports {
  const all: Array<{ level: string; message: string }> = [];
  return {
    report: (level, message) => all.push({ level, message }),
    all,
    of: (level) => all.filter((r) => r.level === level).map((r) => r.message),
  };
}

let providers = 0;

export interface RuntimeSession {
  readonly session: AgentSession;
  readonly sessions: SessionManager;
  /** The faux provider: `state.callCount` counts model calls. */
  readonly faux: FauxProviderRegistration;
  /** The contexts the model was called with. */
  readonly requests: Array<Parameters<Extract<FauxResponseStep, Function>>[0]>;
  dispose(): void;
}

export interface RuntimeOptions {
  /** The extensions pi loads (inline factories). */
  readonly extensions?: readonly ExtensionFactory[];
  /** Extension files or packages pi loads by path, as from settings or `pi -e`. */
  readonly extensionPaths?: readonly string[];
  /** The faux model's context window. */
  readonly contextWindow: number;
  /** pi's own auto-compaction (its threshold: the window less `compaction.reserveTokens`, and its overflow recovery). Default off. */
  readonly autoCompaction?: boolean;
  /** What the faux model answers, in turn (default: "ok", ten times). */
  readonly responses?: readonly ReturnType<typeof fauxAssistantMessage>[];
}

/**
 * An AgentSession created with pi's SDK over the session copy: a faux model (its own provider,
 * a runtime API key, since pi checks for one before asking extensions to compact), no resource
 * discovery outside `session.dir`, pi's auto-compaction off unless `autoCompaction`. The model answers "ok".
 */
export async function createRuntimeSession(session: SessionDir, options: RuntimeOptions): Promise<RuntimeSession> {
  providers += 1;
  const name = `faux-test-${providers}`;
  const faux = registerFauxProvider({ api: name, provider: name, models: [{ id: "faux-model", contextWindow: options.contextWindow }] });
  const requests: RuntimeSession["requests"] = [];
  const answers = options.responses ?? Array.from({ length: 10 }, () => fauxAssistantMessage("ok"));
  faux.setResponses(
    answers.map((answer) => (context: (typeof requests)[number]) => {
      requests.push(context);
      return answer;
    }),
  );
  const model = faux.getModel();
  const authStorage = AuthStorage.inMemory();
  authStorage.setRuntimeApiKey(model.provider, "not-used-by-the-faux-provider");
  const modelRegistry = ModelRegistry.inMemory(authStorage);
  const agentDir = join(session.dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: options.autoCompaction ?? false } });
  const resourceLoader = new DefaultResourceLoader({
    cwd: session.dir,
    agentDir,
    settingsManager,
    additionalExtensionPaths: [...(options.extensionPaths ?? [])],
    extensionFactories: [...(options.extensions ?? [])] as unknown as LegacyExtensionFactory[],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  await resourceLoader.reload();
  const errors = resourceLoader.getExtensions().errors;
  if (errors.length > 0) throw new Error(`pi could not load the extensions: ${JSON.stringify(errors)}`);
  const sessions = openSession(session);
  const { session: agentSession } = await createAgentSession({
    cwd: session.dir,
    agentDir,
    model,
    authStorage,
    modelRegistry,
    resourceLoader,
    sessionManager: sessions,
    settingsManager,
  });
  return {
    session: agentSession,
    sessions,
    faux,
    requests,
    dispose: () => {
      agentSession.dispose();
      faux.unregister();
    },
  };
}

/** A `session_before_compact` event and context exactly as pi built them, and the session they came from. */
export interface CapturedCompaction {
  readonly event: SessionBeforeCompactEvent;
  readonly ctx: ExtensionContext;
  readonly runtime: RuntimeSession;
}

/**
 * Asks pi to compact with an extension that records pi's event and context and cancels, so
 * the handlers can be called directly with real pi-shaped input. Dispose `runtime` when done.
 */
export async function capturePiCompaction(session: SessionDir, contextWindow: number, customInstructions?: string): Promise<CapturedCompaction> {
  let captured: { event: SessionBeforeCompactEvent; ctx: ExtensionContext } | undefined;
  const capture: LegacyExtensionFactory = (pi) => {
    pi.on("session_before_compact", (event, ctx) => {
      captured = { event: event as unknown as SessionBeforeCompactEvent, ctx: ctx as unknown as ExtensionContext };
      return { cancel: true };
    });
  };
  const runtime = await createRuntimeSession(session, { contextWindow, extensions: [capture as unknown as ExtensionFactory] });
  await runtime.session.compact(customInstructions).catch((error: Error) => {
    if (error.message !== "Compaction cancelled") throw error;
  });
  if (captured === undefined) throw new Error("pi did not emit session_before_compact");
  return { ...captured, runtime };
}

/** pi 0.73.1's SessionManager, as the extension (typed against today's pi) reads it. */
export function asReadonlySessionManager(sessions: SessionManager): ReadonlySessionManager {
  return sessions as unknown as ReadonlySessionManager;
}

/** The branch of the upgraded copy as pi holds it, and the messages and entry ids of its context (our boundary rule). */
export function fixtureBranch(session: SessionDir): { sessions: SessionManager; entries: SessionEntry[]; messages: PiMessage[]; entryIds: string[] } {
  const sessions = openSession(session);
  const entries = sessions.getBranch() as unknown as SessionEntry[];
  const { messages, entryIds } = buildContext(entries);
  return { sessions, entries, messages, entryIds };
}
