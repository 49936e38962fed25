/**
 * Real sessions of today's pi (`@earendil-works/pi-coding-agent` 0.87.1, the newest that installs
 * from the registry): the same copy of a real fixture as ./pi-session.ts, opened with this pi's
 * SessionManager, and AgentSessions created with its SDK. Its SDK differs from 0.73.1's: models
 * and credentials live in a `ModelRuntime` (no AuthStorage / ModelRegistry), the faux provider is
 * registered on that runtime, and project trust is part of the settings.
 *
 * pi 0.87.1 needs Node >= 22.19, so everything is imported on demand: on an older Node the tests
 * skip with `PI_087_UNSUPPORTED` as their reason instead of failing to load.
 */
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { AssistantMessage, FauxProviderHandle, FauxResponseStep } from "@earendil-works/pi-ai";
import type { AgentSession, ExtensionFactory, SessionManager, SettingsManager } from "@earendil-works/pi-coding-agent";

type Settings = NonNullable<Parameters<typeof SettingsManager.inMemory>[0]>;
import type { SessionDir } from "./pi-session.js";

export const PI_087_VERSION = "0.87.1";

/** The Node this pi declares in its `engines` field. */
const PI_087_NODE = [22, 19] as const;

function nodeAtLeast([major, minor]: readonly [number, number]): boolean {
  const [runningMajor = 0, runningMinor = 0] = process.versions.node.split(".").map(Number);
  return runningMajor > major || (runningMajor === major && runningMinor >= minor);
}

/** Why pi 0.87.1 cannot run here, or undefined when it can. */
export const PI_087_UNSUPPORTED: string | undefined = !nodeAtLeast(PI_087_NODE)
  ? `pi ${PI_087_VERSION} needs Node >= ${PI_087_NODE.join(".")} (its engines field); this is Node ${process.versions.node}. Run the tests with Node 22 or 24.`
  : !existsSync(fileURLToPath(new URL("../../node_modules/@earendil-works/pi-coding-agent/package.json", import.meta.url)))
    ? `pi ${PI_087_VERSION} is not installed: it is not part of npm ci; run \`node scripts/host-install.mjs pi-0.87\` at the repository root (npm test does)`
    : undefined;

// CI runs every supported Node, each of which runs this pi, and installs it: a skip there would hide the tests.
if (PI_087_UNSUPPORTED !== undefined && process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI)) {
  throw new Error(`CI must run the pi ${PI_087_VERSION} runtime tests, but ${PI_087_UNSUPPORTED}`);
}

export interface Runtime087Options {
  /** The extensions pi loads (inline factories). */
  readonly extensions?: readonly ExtensionFactory[];
  /** Extension files or packages pi loads by path, as from settings or `pi -e`. */
  readonly extensionPaths?: readonly string[];
  /**
   * The model: a faux model with this context window (default), or `"session"`: the model the
   * session file names, from pi's own catalog (given a runtime API key; the tests never prompt it).
   */
  readonly model?: { readonly contextWindow: number } | "session";
  /**
   * The user's answer to pi's project-trust question for `session.dir`, as pi's startup asks it
   * (`resolveProjectTrust` of the resource loader). Left out: pi's SDK default (trusted, no question).
   */
  readonly projectTrust?: boolean;
  /** pi's settings (default: auto-compaction off). */
  readonly settings?: Partial<Settings>;
  /** What the faux model answers, in turn (default: "ok", ten times). */
  readonly responses?: readonly AssistantMessage[];
}

export interface RuntimeSession087 {
  readonly session: AgentSession;
  readonly sessions: SessionManager;
  /** The faux provider: `state.callCount` counts model calls. */
  readonly faux: FauxProviderHandle;
  /** The contexts the faux model was called with. */
  readonly requests: Array<Parameters<Extract<FauxResponseStep, Function>>[0]>;
  dispose(): void;
}

let providers = 0;

/**
 * An AgentSession of pi 0.87.1 over the session copy: a ModelRuntime with a faux provider (and a
 * runtime API key, since pi checks for one before asking extensions to compact), no resource
 * discovery outside `session.dir`, pi's auto-compaction off unless `settings` turns it on.
 */
export async function createRuntimeSession087(session: SessionDir, options: Runtime087Options = {}): Promise<RuntimeSession087> {
  if (PI_087_UNSUPPORTED !== undefined) throw new Error(PI_087_UNSUPPORTED);
  const ai = await import("@earendil-works/pi-ai");
  const pi = await import("@earendil-works/pi-coding-agent");

  providers += 1;
  const name = `faux-087-${providers}`;
  const contextWindow = options.model === "session" ? 200_000 : (options.model?.contextWindow ?? 200_000);
  const faux = ai.fauxProvider({ api: name, provider: name, models: [{ id: "faux-model", contextWindow }] });
  const requests: RuntimeSession087["requests"] = [];
  const answers = options.responses ?? Array.from({ length: 10 }, () => ai.fauxAssistantMessage("ok"));
  faux.setResponses(
    answers.map((answer) => (context: (typeof requests)[number]) => {
      requests.push(context);
      return answer;
    }),
  );

  const agentDir = join(session.dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  const modelRuntime = await pi.ModelRuntime.create({ authPath: join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
  modelRuntime.registerNativeProvider(faux.provider);
  await modelRuntime.setRuntimeApiKey(name, "not-used-by-the-faux-provider");
  if (options.model === "session") await modelRuntime.setRuntimeApiKey("anthropic", "never-sent: the tests do not prompt this model");

  const settingsManager = pi.SettingsManager.inMemory({ compaction: { enabled: false }, ...options.settings });
  const resourceLoader = new pi.DefaultResourceLoader({
    cwd: session.dir,
    agentDir,
    settingsManager,
    additionalExtensionPaths: [...(options.extensionPaths ?? [])],
    extensionFactories: [...(options.extensions ?? [])],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
    noContextFiles: true,
  });
  const trust = options.projectTrust;
  await resourceLoader.reload(trust === undefined ? {} : { resolveProjectTrust: async () => trust });
  const errors = resourceLoader.getExtensions().errors;
  if (errors.length > 0) throw new Error(`pi could not load the extensions: ${JSON.stringify(errors)}`);

  const sessions = pi.SessionManager.open(session.file, undefined, session.dir);
  const { session: agentSession } = await pi.createAgentSession({
    cwd: session.dir,
    agentDir,
    ...(options.model === "session" ? {} : { model: faux.getModel() }),
    modelRuntime,
    resourceLoader,
    sessionManager: sessions,
    settingsManager,
  });
  return {
    session: agentSession,
    sessions,
    faux,
    requests,
    dispose: () => agentSession.dispose(),
  };
}
