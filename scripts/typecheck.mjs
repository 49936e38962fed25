#!/usr/bin/env node
// A package's `typecheck` (run in the package's folder): `tsc --noEmit` over its tsconfig.json.
// The real hosts are not part of `npm ci` (scripts/host-install.mjs installs them; `npm test` does
// first), and a package's tests that drive a host import its types. When a host that links into
// this package is missing, the files that import one of its packages, directly or through a
// relative import, are left out of the check with a warning that names them and the command that
// installs the host, as scripts/host-tests.mjs does for vitest; under CI (CI=true), where every
// host's tests must run, a missing host is an error instead.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isCi, missingHosts } from "./host-tests.mjs";

const require = createRequire(import.meta.url);

/**
 * The files among `files` that import one of `packages` (the name or a subpath of it), directly
 * or through relative imports of each other.
 * @param {string[]} files absolute paths of the program's files
 * @param {string[]} packages package names
 * @param {(file: string) => string} [read]
 * @returns {string[]} a subset of `files`, in their order
 */
export function filesImporting(files, packages, read = (file) => readFileSync(file, "utf8")) {
  const ts = require("typescript");
  const known = new Set(files);
  const importers = new Map(files.map((file) => [file, []]));
  const reached = new Set();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(read(file), true, true);
    for (const { fileName: specifier } of importedFiles) {
      if (packages.some((name) => specifier === name || specifier.startsWith(`${name}/`))) reached.add(file);
      if (!specifier.startsWith(".")) continue;
      const target = sourceOf(resolve(dirname(file), specifier), known);
      if (target !== undefined) importers.get(target)?.push(file);
    }
  }
  const queue = [...reached];
  while (queue.length > 0) {
    for (const importer of importers.get(queue.pop()) ?? []) {
      if (reached.has(importer)) continue;
      reached.add(importer);
      queue.push(importer);
    }
  }
  return files.filter((file) => reached.has(file));
}

/** The program's file a relative specifier names (`./x.js` is `./x.ts` under NodeNext). */
function sourceOf(path, known) {
  const stems = [path, path.replace(/\.js$/, ".ts"), path.replace(/\.mjs$/, ".mts"), path.replace(/\.jsx$/, ".tsx"), `${path}.ts`, `${path}/index.ts`];
  return stems.find((stem) => known.has(stem));
}

/**
 * What a package's typecheck leaves out, and whether it must fail instead.
 * @param {string} packageDir
 * @param {{ env?: NodeJS.ProcessEnv, installed?: (packageDir: string, name: string) => boolean }} [options]
 * @returns {{ fileNames: string[], options: object, leftOut: string[], fail?: string, warning?: string }}
 */
export function typecheckPlan(packageDir, options = {}) {
  const ts = require("typescript");
  const missing = missingHosts(packageDir, { installed: options.installed });
  const configFile = ts.findConfigFile(packageDir, ts.sys.fileExists, "tsconfig.json");
  if (configFile === undefined) throw new Error(`no tsconfig.json in ${packageDir}`);
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configFile, ts.sys.readFile).config, ts.sys, dirname(configFile));
  const leftOut = missing.length === 0 ? [] : filesImporting(parsed.fileNames, missing.flatMap(({ missing: names }) => names));
  const plan = { fileNames: parsed.fileNames, options: parsed.options, leftOut };
  if (leftOut.length === 0) return plan;
  const files = leftOut.map((file) => relative(packageDir, file)).join(", ");
  const why = missing.map(({ message }) => message).join("; ");
  return isCi(options.env) ? { ...plan, fail: `CI must typecheck ${files}, but ${why}` } : { ...plan, warning: `SKIPPED typecheck of ${files}: ${why}` };
}

function main() {
  const packageDir = process.cwd();
  const plan = typecheckPlan(packageDir);
  if (plan.fail !== undefined) {
    console.error(plan.fail);
    process.exit(1);
  }
  if (plan.leftOut.length === 0) {
    const tsc = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.json", "--noEmit"], { stdio: "inherit" });
    process.exit(tsc.status ?? 1);
  }
  console.warn(plan.warning);
  const ts = require("typescript");
  const program = ts.createProgram({ rootNames: plan.fileNames.filter((file) => !plan.leftOut.includes(file)), options: { ...plan.options, noEmit: true } });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) {
    const host = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => packageDir, getNewLine: () => "\n" };
    process.stdout.write(ts.formatDiagnostics(diagnostics, host));
    process.exit(2);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
