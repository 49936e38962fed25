/**
 * A writer process for bench/session-stores.bench.ts: opens its sessions with a store's opener
 * (any module and export, so other stores' rows use the same writer), prints `ready`, waits for
 * the file `go`, then appends `appends` single user messages, round robin over its sessions,
 * each append on its own, and prints `done <ms>`.
 *
 *   node session-store-writer.mjs '{"module","export","args":[[...opener args for session 1], ...],"appends","go","name"}'
 */
import { existsSync } from "node:fs";

const spec = JSON.parse(process.argv[2] ?? "{}");
const open = (await import(spec.module))[spec.export];
const stores = [];
for (const args of spec.args) stores.push(await open(...args));
process.stdout.write("ready\n");
while (!existsSync(spec.go)) await new Promise((resolve) => setTimeout(resolve, 1));
const start = performance.now();
for (let i = 0; i < spec.appends; i++) {
  const store = stores[i % stores.length];
  await store.append([{ type: "message", message: { role: "user", content: `${spec.name} append ${i}: run the tests in src/store again`, timestamp: Date.now() } }]);
}
process.stdout.write(`done ${performance.now() - start}\n`);
for (const store of stores) await store.close();
