/**
 * Reads what a tool call did from its name and arguments, for any agent's tool set: which
 * files it read or modified, which shell command it ran, and a one-line summary of its
 * arguments.
 */
import type { ToolCallInfo } from "../messages/adapter.js";
import { clip, collapseWhitespace } from "./text.js";

/** What a tool call did, as far as the summary cares. */
export type ToolCallKind = "read" | "modify" | "command" | "other";

export interface ToolCallReading {
  readonly kind: ToolCallKind;
  readonly name: string;
  /** Files the call read or modified. */
  readonly paths: readonly string[];
  /** Past-tense verb for done work: `edited`, `wrote`, `patched`, `read`, `ran`. */
  readonly verb: string;
  /** The shell command, for `command` calls. */
  readonly command?: string;
  /** One line naming the call's main arguments (path, command, or `key=value` pairs). */
  readonly argsSummary: string;
}

/** Argument fields that name a file, in the order they are looked for. */
export const PATH_FIELDS = ["path", "file_path", "filePath", "file", "notebook_path"] as const;

const READ_TOOLS = new Set(["read", "view", "cat", "read_file", "readfile", "view_file", "open_file", "notebookread"]);

const MODIFY_TOOLS = new Map<string, string>([
  ["write", "wrote"],
  ["write_file", "wrote"],
  ["create_file", "wrote"],
  ["create", "wrote"],
  ["edit", "edited"],
  ["edit_file", "edited"],
  ["multiedit", "edited"],
  ["multi_edit", "edited"],
  ["str_replace", "edited"],
  ["str_replace_editor", "edited"],
  ["str_replace_based_edit_tool", "edited"],
  ["insert", "edited"],
  ["replace", "edited"],
  ["notebookedit", "edited"],
  ["notebook_edit", "edited"],
  ["apply_patch", "patched"],
  ["applypatch", "patched"],
  ["patch", "patched"],
]);

/** Sub-commands of Anthropic's text editor tool (`command` argument), by effect. */
const EDITOR_COMMANDS = new Map<string, { kind: "read" | "modify"; verb: string }>([
  ["view", { kind: "read", verb: "read" }],
  ["create", { kind: "modify", verb: "wrote" }],
  ["str_replace", { kind: "modify", verb: "edited" }],
  ["insert", { kind: "modify", verb: "edited" }],
  ["undo_edit", { kind: "modify", verb: "edited" }],
]);

const PATCH_FIELDS = ["input", "patch", "diff"] as const;
const PATCH_FILE_LINE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$/gm;
const SHELL_WRAPPERS = new Set(["bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "powershell", "pwsh", "cmd"]);
const SHELL_FLAGS = new Set(["-c", "-lc", "-ic", "/c", "-Command"]);
const SUMMARY_VALUE_CHARS = 60;
const SUMMARY_CHARS = 160;

/** Reads one tool call. Arguments given as a JSON string are parsed. */
export function readToolCall(call: ToolCallInfo): ToolCallReading {
  const args = argumentsObject(call.arguments);
  const name = call.name;
  const lower = name.toLowerCase();
  const path = firstPath(args);

  const editorCommand = typeof args["command"] === "string" ? EDITOR_COMMANDS.get(args["command"]) : undefined;
  if (path !== undefined && editorCommand !== undefined) {
    return { kind: editorCommand.kind, name, paths: [path], verb: editorCommand.verb, argsSummary: path };
  }
  if (READ_TOOLS.has(lower) && path !== undefined) {
    return { kind: "read", name, paths: [path], verb: "read", argsSummary: path };
  }
  const modifyVerb = MODIFY_TOOLS.get(lower);
  if (modifyVerb !== undefined) {
    const paths = path !== undefined ? [path] : patchPaths(args);
    if (paths.length > 0) return { kind: "modify", name, paths, verb: modifyVerb, argsSummary: paths.join(", ") };
  }
  const command = shellCommand(args);
  if (command !== undefined) {
    const patched = command.startsWith("apply_patch") ? patchPathsIn(command) : [];
    if (patched.length > 0) return { kind: "modify", name, paths: patched, verb: "patched", argsSummary: patched.join(", ") };
    return { kind: "command", name, paths: [], verb: "ran", command, argsSummary: command };
  }
  return { kind: "other", name, paths: [], verb: "called", argsSummary: summariseArguments(args) };
}

function argumentsObject(value: unknown): Record<string, unknown> {
  if (typeof value === "string") {
    try {
      return argumentsObject(JSON.parse(value) as unknown);
    } catch {
      return value.trim().length > 0 ? { input: value } : {};
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  return {};
}

function firstPath(args: Record<string, unknown>): string | undefined {
  for (const field of PATH_FIELDS) {
    const value = args[field];
    if (typeof value === "string" && value.trim().length > 0) return value.trim();
  }
  return undefined;
}

function patchPaths(args: Record<string, unknown>): string[] {
  for (const field of PATCH_FIELDS) {
    const value = args[field];
    if (typeof value === "string") {
      const paths = patchPathsIn(value);
      if (paths.length > 0) return paths;
    }
  }
  return [];
}

/** File names in a Codex-style patch (`*** Update File: path`). */
function patchPathsIn(patch: string): string[] {
  const paths: string[] = [];
  for (const match of patch.matchAll(PATCH_FILE_LINE)) {
    const path = (match[1] ?? match[2] ?? "").trim();
    if (path.length > 0 && !paths.includes(path)) paths.push(path);
  }
  return paths;
}

/** The command of a shell tool: `command` or `cmd`, as a string or an argv array. */
function shellCommand(args: Record<string, unknown>): string | undefined {
  const value = args["command"] ?? args["cmd"];
  if (typeof value === "string") return value.trim().length > 0 ? value.trim() : undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((part) => typeof part === "string")) return undefined;
  const argv = value as string[];
  const [program, flag, script] = argv;
  if (argv.length === 3 && program !== undefined && SHELL_WRAPPERS.has(program) && flag !== undefined && SHELL_FLAGS.has(flag)) {
    return script?.trim();
  }
  return argv.join(" ").trim();
}

/** `key=value` pairs of an other tool's scalar arguments, each value cut short. */
function summariseArguments(args: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    const shown = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}=${clip(collapseWhitespace(shown ?? ""), SUMMARY_VALUE_CHARS)}`);
  }
  return clip(parts.join(", "), SUMMARY_CHARS);
}
