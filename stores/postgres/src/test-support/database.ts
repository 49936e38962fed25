/** A fresh database on the tests' server (see global-setup.ts), or the reason the tests skip. */
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createDatabase } from "../testing/postgres-server.js";

const provided = inject("postgres");

/** Why the tests skip, or undefined when the server is there. */
export const skipReason: string | undefined = "skip" in provided ? provided.skip : undefined;

/** The server's admin connection string (the `postgres` database). */
export const serverUrl: string = "url" in provided ? provided.url : "";

/** Creates a database named after `prefix` and returns its connection string. */
export async function freshDatabase(prefix: string): Promise<string> {
  return createDatabase(serverUrl, `${prefix}_${randomBytes(4).toString("hex")}`);
}
