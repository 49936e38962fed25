import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Inside the repo, so a user's plugin file can import @compaction/core as it would in a real project. */
const ROOT = fileURLToPath(new URL("../.tmp/", import.meta.url));

/** A fresh project folder with the given files (paths relative to it), removed after the test. */
export function tmpProject(files: Record<string, string>): string {
  mkdirSync(ROOT, { recursive: true });
  const dir = mkdtempSync(join(ROOT, "project-"));
  made.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  return dir;
}
