/**
 * vitest globalSetup: one real Postgres server for the package's tests (each test file makes its
 * own database on it). Without the binaries the tests skip naming the install command, except
 * under CI (CI=true), where they must run: there the setup fails.
 */
import type { TestProject } from "vitest/node";
import { findPostgresBinaries, startPostgresServer } from "../testing/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server's connection string (postgres database), or why there is none. */
    postgres: { readonly url: string } | { readonly skip: string };
  }
}

const CI = process.env["CI"] !== undefined && !["", "0", "false"].includes(process.env["CI"]);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const found = findPostgresBinaries();
  if ("missing" in found) {
    if (CI) throw new Error(`CI must run the Postgres store's tests against a real server, but ${found.missing}`);
    project.provide("postgres", { skip: found.missing });
    return async () => undefined;
  }
  const server = await startPostgresServer({ settings: { fsync: "off" }, onLog: (log) => process.stderr.write(log) });
  project.provide("postgres", { url: server.url });
  return () => server.stop();
}
