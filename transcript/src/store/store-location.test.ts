import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCodes } from "@compaction/core";
import { afterAll, describe, expect, it } from "vitest";
import { openEntryStore } from "./open-entry-store.js";
import { createPiFileStore } from "./pi-file-store.js";
import { openSqliteStore } from "./sqlite-store.js";
import { isDatabaseLocation, parseStoreLocation, redactLocation } from "./store-location.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-store-location-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("parseStoreLocation", () => {
  it("takes apart files, sqlite:<file>#<id> and postgres://...#<id>", () => {
    expect(parseStoreLocation("/s/a.jsonl")).toEqual({ kind: "pi-file", path: "/s/a.jsonl" });
    expect(parseStoreLocation("sqlite:./db.sqlite#0194-ab")).toEqual({ kind: "sqlite", file: "./db.sqlite", session: "0194-ab" });
    expect(parseStoreLocation("sqlite:/x/db.sqlite")).toEqual({ kind: "sqlite", file: "/x/db.sqlite", session: undefined });
    expect(parseStoreLocation("postgres://me@h:5432/db#s1")).toEqual({ kind: "postgres", connectionString: "postgres://me@h:5432/db", session: "s1" });
    expect(parseStoreLocation("postgresql://h/db")).toEqual({ kind: "postgres", connectionString: "postgresql://h/db", session: undefined });
    expect(isDatabaseLocation("sqlite:a#b")).toBe(true);
    expect(isDatabaseLocation("./a.jsonl")).toBe(false);
  });

  it("refuses an empty location, a sqlite: without a file and a '#' without an id, never showing a password", () => {
    expect(() => parseStoreLocation("")).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
    expect(() => parseStoreLocation("sqlite:#abc")).toThrow(/names no database file/);
    expect(() => parseStoreLocation("postgres://me:secret@h/db#")).toThrow(/postgres:\/\/me@h\/db#/);
    expect(() => parseStoreLocation("postgres://me:secret@h/db#")).not.toThrow(/secret/);
    expect(redactLocation("postgres://me:secret@h:5432/db#s")).toBe("postgres://me@h:5432/db#s");
  });
});

describe("openEntryStore", () => {
  it("opens a pi file and a SQLite session by their locations", async () => {
    const file = await createPiFileStore(join(dir, "s.jsonl"), { cwd: "/w" });
    const viaPath = await openEntryStore(file.location);
    expect(viaPath.kind).toBe("pi-file");
    const sqlite = await openSqliteStore({ file: join(dir, "db.sqlite"), create: { cwd: "/w" } });
    const viaLocation = await openEntryStore(sqlite.location);
    expect(viaLocation).toMatchObject({ kind: "sqlite", location: sqlite.location });
    for (const store of [file, viaPath, sqlite, viaLocation]) await store.close();
  });

  it("says how to open Postgres and a database without a session", async () => {
    await expect(openEntryStore("postgres://me@h/db#s")).rejects.toThrow(/@compaction\/store-postgres/);
    await expect(openEntryStore(`sqlite:${join(dir, "db.sqlite")}`)).rejects.toThrow(/not a session in it/);
  });
});
