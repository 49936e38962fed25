import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Files to write, by path relative to the project root. */
export type ProjectFiles = Readonly<Record<string, string>>;

const created: string[] = [];

/**
 * A fresh directory under the OS tmp dir holding `files`. A `package.json` is added unless
 * `files` has one, so cosmiconfig's "project" search stops here. Remove with `removeProjects()`.
 */
export function makeProject(files: ProjectFiles = {}): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "compaction-config-")));
  created.push(root);
  writeFiles(root, { "package.json": JSON.stringify({ name: "tmp-project", private: true }), ...files });
  return root;
}

/** Writes `files` under `root`, creating directories as needed. */
export function writeFiles(root: string, files: ProjectFiles): void {
  for (const [path, text] of Object.entries(files)) {
    const file = join(root, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

/** Deletes every directory `makeProject` created. */
export function removeProjects(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** Source of an ES module plugin whose instance records the options its factory received. */
export function recordingPluginSource(name: string): string {
  return `export default function factory(options) {
  return { name: ${JSON.stringify(name)}, options, apply() {} };
}
`;
}
