#!/usr/bin/env node
// The `compaction` command. The code is in ../dist (built by `npm run build`, and on `npm ci` in
// the repository by its `prepare` script): when it, or a package it imports, is not built, say
// so in one line and how to fix it, never with a stack trace.
import nodeModule from "node:module";

// Node keeps the compiled code of the CLI's 270 modules on disk (in the system's temporary folder;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so every run after the first starts about 50 ms sooner.
nodeModule.enableCompileCache?.();

// Two of Node's warnings say what the CLI says better, or nothing a user can act on, on every run:
// that node:sqlite (the SQLite session store) is experimental on Node 22, and that an ES module
// plugin file failed to load as CommonJS (the CLI's error names the file and the fix). Every other
// warning goes to Node's own listener, printed as Node prints it.
const printWarning = process.listeners("warning");
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  const text = String(warning?.message ?? "");
  if (warning?.name === "ExperimentalWarning" && text.startsWith("SQLite is an experimental feature")) return;
  if (text.startsWith("Failed to load the ES module")) return;
  for (const listener of printWarning) listener.call(process, warning);
});

// A reader that stops early (`npx compaction --help | head`) closes the pipe: that ends the run,
// quietly, as it does for other commands, not with Node's unhandled EPIPE and a stack trace.
process.stdout.on("error", (error) => {
  if (error?.code !== "EPIPE") throw error;
  process.exit(process.exitCode ?? 0);
});

let main;
try {
  ({ main } = await import("../dist/index.js"));
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND") throw error;
  const missing = /Cannot find (?:module|package) '([^']+)'/.exec(String(error.message))?.[1] ?? "a module";
  process.stderr.write(
    `compaction: the CLI is not built: ${missing} is missing.\n` +
      "hint: in the repository, run 'npm run build' (npm ci runs it unless scripts are turned off); an installed package ships built.\n",
  );
  process.exit(1);
}

process.exitCode = await main(process.argv.slice(2));
