/**
 * `PostgresStore`: the session store contract (`EntryStore`) over a Postgres database, for a
 * service whose sessions are reached from many workers on many machines. Many sessions share one
 * database (tables in schema.ts).
 *
 * Concurrency: every write is one transaction that first locks the session's row
 * (`SELECT ... FOR UPDATE`), reads the leaf under that lock, and writes after it; so writers from
 * any number of processes are put in one order, each append's entries stay together, and a
 * conditional compaction sees the newest compaction as it is at that moment (two workers that
 * both saw the threshold crossed write one compaction). A writer that dies or loses its connection
 * mid-transaction leaves nothing: Postgres rolls the transaction back.
 *
 * Reads never scan the session: the branch's facts (compactions, the newest one, the
 * auto-compaction setting) are stored on each entry's row, computed from its parent's when it is
 * written, and the branch from the boundary is a walk up the parents from the leaf that stops at
 * the newest compaction's first kept entry (parents are always written before their children).
 *
 * One compaction prepared in the background per session is claimed in the database
 * (`preparationClaims`, preparation-claims.ts), under the same session row lock.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import {
  type BranchRead,
  closedStoreError,
  type CompactionEntry,
  compactionEntry,
  type CompactionWrite,
  createSessionId,
  type EntryHit,
  type EntrySearchOptions,
  type EntryStore,
  type NewEntry,
  type NewSessionFields,
  newSessionHeader,
  type PiCompaction,
  type PreparationClaims,
  type SessionEntry,
  type SessionHeader,
  sessionAutoCompact,
} from "@compaction/transcript";
import pg from "pg";
import { assignNewEntries } from "./assign-entries.js";
import { literalText, searchableText, words } from "./entry-text.js";
import { postgresError, isConnectionError } from "./postgres-errors.js";
import { PostgresPreparationClaims } from "./preparation-claims.js";
import { migrate, quoteSchema } from "./schema.js";
import { acquirePool } from "./shared-pools.js";

/** Options of `openPostgresStore`. */
export interface PostgresStoreOptions {
  /**
   * A connection string, e.g. `postgres://user:password@host:5432/db`; a `#<session id>` at its
   * end names the session when `session` does not (a store's `location` with the credentials
   * added is such a string). Stores opened with the same
   * string in one process share one pool (at most 10 connections), ended when the last of them
   * closes. Give this or `pool`.
   */
  readonly connectionString?: string;
  /** A pool of your own (shared by many stores; `close()` leaves it open). */
  readonly pool?: pg.Pool;
  /**
   * The session's id (pi's session id, or any text). May be left out with `create`: a new id
   * (UUID v7, as pi makes them) is used.
   */
  readonly session?: string;
  /**
   * Create the session when it does not exist, with these header fields (`cwd`, `parentSession`,
   * `timestamp`, any other; `true`: none): `timestamp` now and `cwd` the process's unless given,
   * the current version (see transcript's `newSessionHeader`). Without it a session that does not
   * exist is an error.
   */
  readonly create?: boolean | NewSessionFields;
  /** The Postgres schema holding the tables. Default `compaction`. */
  readonly schema?: string;
}

/** The facts of the branch that ends at an entry (stored on the entry's row). */
interface BranchFacts {
  readonly compactions: number;
  readonly newestCompactionId: string | null;
  readonly newestFirstKept: string | null;
  readonly autoCompact: boolean | undefined;
}

const NO_FACTS: BranchFacts = { compactions: 0, newestCompactionId: null, newestFirstKept: null, autoCompact: undefined };

interface FactsRow {
  id: string;
  seq: string;
  compactions: number;
  newest_compaction_id: string | null;
  newest_first_kept: string | null;
  auto_compact: boolean | null;
}

function factsOf(row: FactsRow): BranchFacts {
  return { compactions: row.compactions, newestCompactionId: row.newest_compaction_id, newestFirstKept: row.newest_first_kept, autoCompact: row.auto_compact ?? undefined };
}

/** The facts of the branch ending at `entry`, from its parent's. */
function nextFacts(parent: BranchFacts, entry: SessionEntry): BranchFacts {
  if (entry.type === "compaction") return { ...parent, compactions: parent.compactions + 1, newestCompactionId: entry.id, newestFirstKept: entry.firstKeptEntryId };
  const setting = sessionAutoCompact([entry]);
  return setting === undefined ? parent : { ...parent, autoCompact: setting };
}

/** Tries an append again when a freshly drawn id collides with one already in the session. */
const ID_COLLISION_ATTEMPTS = 5;

/**
 * Opens the session `options.session` in a Postgres database: creates or upgrades the tables
 * (refusing tables newer than this package), checks the session exists (or creates it with
 * `create`), and returns its store. Fails with a CompactionError that names the location when
 * the server cannot be reached, refuses the login, or the session does not exist.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, "openPostgresStore needs exactly one of `connectionString` and `pool`.", {
      hint: 'Pass { connectionString: "postgres://user:password@host:5432/db", session: "..." }.',
    });
  }
  const create = options.create === true ? {} : options.create === false || options.create === undefined ? undefined : options.create;
  // `postgres://user:password@host/db#session` (what `--session` takes) names the session too.
  const hash = options.connectionString?.indexOf("#") ?? -1;
  const connectionString = hash >= 0 ? options.connectionString?.slice(0, hash) : options.connectionString;
  const named = hash >= 0 ? decodeURIComponent((options.connectionString as string).slice(hash + 1)) : undefined;
  const session = options.session ?? (named === "" ? undefined : named) ?? (create === undefined ? undefined : createSessionId());
  if (typeof session !== "string" || session === "") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, "openPostgresStore needs a `session` id (a non-empty string), or `create` to make a new session.");
  }
  const schema = options.schema ?? "compaction";
  quoteSchema(schema);
  const shared = options.pool === undefined ? acquirePool(connectionString as string) : undefined;
  const pool = options.pool ?? (shared as { pool: pg.Pool }).pool;
  const location = postgresLocation(pool, session);
  const store = new PostgresStore(pool, shared?.release ?? (async () => undefined), session, schema, location);
  try {
    // The header is checked before anything is sent: a wrong field creates nothing.
    await store.prepare(create === undefined ? undefined : newSessionHeader(session, create, location));
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

/** `postgres://host:port/database#session`, from the pool's settings, without user or password. */
export function postgresLocation(pool: pg.Pool, session: string): string {
  const settings = (pool as unknown as { options: pg.PoolConfig }).options;
  let host = settings.host ?? process.env["PGHOST"] ?? "localhost";
  let port = settings.port ?? Number(process.env["PGPORT"] ?? 5432);
  let database = settings.database ?? process.env["PGDATABASE"];
  if (settings.connectionString !== undefined) {
    try {
      const url = new URL(settings.connectionString);
      if (url.hostname !== "") host = decodeURIComponent(url.hostname);
      if (url.port !== "") port = Number(url.port);
      if (url.pathname.length > 1) database = decodeURIComponent(url.pathname.slice(1));
    } catch {
      // a key=value string: keep the defaults
    }
  }
  return `postgres://${host}:${port}/${database ?? settings.user ?? process.env["PGUSER"] ?? "postgres"}#${session}`;
}

/**
 * Reads `postgres://host:port/database#session` (a store's `location`) back into the server part
 * and the session id, or undefined when `location` is not one. The location has no user or
 * password: connect with them from the environment (PGUSER, PGPASSWORD) or a connection string.
 */
export function parsePostgresLocation(location: string): { readonly server: string; readonly session: string } | undefined {
  if (!/^postgres(ql)?:\/\//.test(location)) return undefined;
  const hash = location.lastIndexOf("#");
  if (hash < 0 || hash === location.length - 1) return undefined;
  return { server: location.slice(0, hash), session: decodeURIComponent(location.slice(hash + 1)) };
}

/** A session in a Postgres database (see the top of this file). Made by `openPostgresStore`. */
export class PostgresStore implements EntryStore {
  readonly kind = "postgres";
  readonly location: string;
  /** The session's id. */
  readonly sessionId: string;
  /** The session's claim on the compaction prepared in the background (see preparation-claims.ts). */
  readonly preparationClaims: PreparationClaims;
  readonly #pool: pg.Pool;
  readonly #release: () => Promise<void>;
  readonly #schema: string;
  #closed = false;

  /** @internal Use `openPostgresStore`. */
  constructor(pool: pg.Pool, release: () => Promise<void>, session: string, schema: string, location: string) {
    this.#pool = pool;
    this.#release = release;
    this.sessionId = session;
    this.#schema = quoteSchema(schema);
    this.location = location;
    this.preparationClaims = new PostgresPreparationClaims({
      sessionId: session,
      location,
      schema: this.#schema,
      assertOpen: (doing) => this.#open(doing),
      withClient: (doing, task) => this.#withClient(doing, task),
      write: (doing, task) => this.#write(doing, task),
      leafId: async (client) => (await this.#sessionRow(client, false)).leafId,
      newestCompactionId: async (client, leafId) => (leafId === null ? null : ((await this.#facts(client, [leafId])).get(leafId)?.facts.newestCompactionId ?? null)),
    });
  }

  /** @internal Creates or checks the tables, and checks the session exists or creates it with `header`. */
  async prepare(header: SessionHeader | undefined): Promise<void> {
    await this.#withClient("open the session", async (client) => {
      await migrate(client, this.#schema.slice(1, -1), this.location);
      if (header !== undefined) {
        await client.query(`INSERT INTO ${this.#schema}.sessions (id, header) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [this.sessionId, JSON.stringify(header)]);
      }
      await this.#sessionRow(client, false);
    });
  }

  async header(): Promise<SessionHeader> {
    this.#open("read the header");
    return this.#withClient("read the header", async (client) => {
      const rows = (await client.query<{ header: string }>(`SELECT header::text AS header FROM ${this.#schema}.sessions WHERE id = $1`, [this.sessionId])).rows;
      if (rows[0] === undefined) throw this.#notFound();
      return JSON.parse(rows[0].header) as SessionHeader;
    });
  }

  async entries(): Promise<SessionEntry[]> {
    this.#open("read the entries");
    return this.#withClient("read the entries", async (client) => {
      await this.#sessionRow(client, false);
      const rows = (await client.query<{ body: string }>(`SELECT body::text AS body FROM ${this.#schema}.entries WHERE session_id = $1 ORDER BY seq`, [this.sessionId])).rows;
      return rows.map((row) => JSON.parse(row.body) as SessionEntry);
    });
  }

  async branch(options: { readonly fromBoundary?: boolean } = {}): Promise<BranchRead> {
    this.#open("read the branch");
    return this.#withClient("read the branch", async (client) => {
      const { leafId } = await this.#sessionRow(client, false);
      if (leafId === null) return { entries: [], leafId, newestCompactionId: null, compactions: 0, autoCompact: undefined };
      const facts = (await this.#facts(client, [leafId])).get(leafId)?.facts ?? NO_FACTS;
      let fromSeq = 0;
      let boundary: string | undefined;
      if (options.fromBoundary === true && facts.newestCompactionId !== null) {
        const found = await this.#facts(client, [facts.newestCompactionId, ...(facts.newestFirstKept === null ? [] : [facts.newestFirstKept])]);
        const compactionSeq = found.get(facts.newestCompactionId)?.seq ?? 0;
        const keptSeq = facts.newestFirstKept === null ? undefined : found.get(facts.newestFirstKept)?.seq;
        fromSeq = keptSeq !== undefined && keptSeq < compactionSeq ? keptSeq : compactionSeq;
        boundary = facts.newestCompactionId;
      }
      const walk = await this.#walk(client, leafId, fromSeq);
      const rows = (
        await client.query<{ body: string }>(`SELECT body::text AS body FROM ${this.#schema}.entries WHERE session_id = $1 AND seq = ANY($2::bigint[]) ORDER BY seq`, [
          this.sessionId,
          walk.map((step) => step.seq),
        ])
      ).rows;
      let entries = rows.map((row) => JSON.parse(row.body) as SessionEntry);
      if (boundary !== undefined) {
        // From the first kept entry when it is on the branch before the compaction, else from the compaction.
        const at = entries.findIndex((entry) => entry.id === boundary);
        const kept = entries.findIndex((entry) => entry.id === facts.newestFirstKept);
        entries = entries.slice(kept >= 0 && kept < at ? kept : Math.max(at, 0));
      }
      return { entries, leafId, newestCompactionId: facts.newestCompactionId, compactions: facts.compactions, autoCompact: facts.autoCompact };
    });
  }

  async append(entries: readonly NewEntry[]): Promise<SessionEntry[]> {
    this.#open("append");
    if (entries.length === 0) return [];
    return this.#write("append to the session", async (client, leafId, lastSeq) => {
      const written = await assignNewEntries(client, this.#schema, this.sessionId, entries, leafId, this.location);
      await this.#insert(client, written, lastSeq);
      return written;
    });
  }

  async appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite> {
    this.#open("append a compaction");
    const entry = compactionEntry(compaction, this.location);
    return this.#write("append a compaction", async (client, leafId, lastSeq): Promise<CompactionWrite> => {
      const facts = leafId === null ? NO_FACTS : ((await this.#facts(client, [leafId])).get(leafId)?.facts ?? NO_FACTS);
      const newest = facts.newestCompactionId;
      if (newest !== expected.newestCompactionId) return { written: false, newestCompactionId: newest };
      // A first kept entry that is not on the branch (any more, or never): the branch is not the
      // one the compaction was planned from, so it is declined like a lost race.
      const kept = (await this.#facts(client, [compaction.firstKeptEntryId])).get(compaction.firstKeptEntryId);
      const onBranch = leafId !== null && kept !== undefined && (await this.#walk(client, leafId, kept.seq)).some((step) => step.id === compaction.firstKeptEntryId);
      if (!onBranch) return { written: false, newestCompactionId: newest };
      const [written] = await assignNewEntries(client, this.#schema, this.sessionId, [entry], leafId, this.location);
      await this.#insert(client, [written as SessionEntry], lastSeq);
      return { written: true, entry: written as CompactionEntry };
    });
  }

  async version(): Promise<string> {
    this.#open("read the version");
    return this.#withClient("read the version", async (client) => String((await this.#sessionRow(client, false)).lastSeq));
  }

  /**
   * Entries of the session (all branches) matching `query`, best first, by Postgres full-text
   * search over the words of each entry's text ('simple' configuration: no stemming; a query word
   * of three letters or more also matches longer words it starts). Entries whose text holds the
   * query as typed (ignoring case and runs of white space: a path, a function name, an error
   * code) come first, as recall ranks them. `score` is in [1, 2) for those and [0, 1) for the
   * rest, growing with Postgres' `ts_rank`.
   */
  async search(query: string, options: EntrySearchOptions): Promise<EntryHit[]> {
    this.#open("search");
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `search() limit must be a whole number of at least 1, but it is ${String(options.limit)}.`);
    }
    const terms = [...new Set(words(query))];
    if (terms.length === 0) return [];
    const lexeme = (word: string) => `'${word}'${word.length >= 3 ? ":*" : ""}`;
    const any = terms.map(lexeme).join(" | ");
    const all = terms.map((word) => `'${word}':*`).join(" & ");
    return this.#withClient("search", async (client) => {
      await this.#sessionRow(client, false);
      const rows = (
        await client.query<{ body: string; rank: number; exact: boolean }>(
          `SELECT body::text AS body, ts_rank(search_words, q.any) AS rank,
                  (search_words @@ q.all AND strpos(search_text, $4) > 0) AS exact
             FROM ${this.#schema}.entries,
                  (SELECT to_tsquery('simple', $2) AS any, to_tsquery('simple', $3) AS all) AS q
            WHERE session_id = $1 AND search_words @@ q.any
            ORDER BY exact DESC, rank DESC, seq DESC
            LIMIT $5`,
          [this.sessionId, any, all, literalText(query), options.limit],
        )
      ).rows;
      return rows.map((row) => {
        const rank = Number(row.rank);
        return { entry: JSON.parse(row.body) as SessionEntry, score: (row.exact ? 1 : 0) + rank / (1 + rank) };
      });
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#release();
  }

  #open(doing: string): void {
    if (this.#closed) throw closedStoreError(this.kind, this.location, doing);
  }

  #notFound(): CompactionError {
    return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No session "${this.sessionId}" in ${this.location.slice(0, this.location.lastIndexOf("#"))}.`, {
      file: this.location,
      hint: "Check the session id, or open it with `create: true` to start a new session (`compaction context import` moves a pi session file there).",
    });
  }

  async #sessionRow(client: pg.ClientBase, forUpdate: boolean): Promise<{ leafId: string | null; lastSeq: number }> {
    const rows = (
      await client.query<{ leaf_id: string | null; last_seq: string }>(
        `SELECT leaf_id, last_seq FROM ${this.#schema}.sessions WHERE id = $1${forUpdate ? " FOR UPDATE" : ""}`,
        [this.sessionId],
      )
    ).rows;
    if (rows[0] === undefined) throw this.#notFound();
    return { leafId: rows[0].leaf_id, lastSeq: Number(rows[0].last_seq) };
  }

  /** Runs `task` with a pooled connection; failures become CompactionErrors about `doing`. */
  async #withClient<R>(doing: string, task: (client: pg.PoolClient) => Promise<R>): Promise<R> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw postgresError(error, this.location, doing, "connect");
    }
    let failure: unknown;
    // A connection lost while checked out also emits "error" on the client (besides failing its
    // query): without a listener that would be an uncaught exception that ends the process.
    const onError = (error: Error) => {
      failure ??= error;
    };
    client.on("error", onError);
    try {
      return await task(client);
    } catch (error) {
      failure = error;
      throw postgresError(error, this.location, doing);
    } finally {
      client.off("error", onError);
      // A connection that failed is dropped from the pool, not reused.
      client.release(failure !== undefined && isConnectionError(failure) ? (failure as Error) : undefined);
    }
  }

  /**
   * One write transaction: locks the session row, reads the leaf and last seq under the lock,
   * runs `task`, commits. A drawn id that collides with an existing one (23505 on the entry's
   * id) rolls back and tries again with new ids.
   */
  async #write<R>(doing: string, task: (client: pg.PoolClient, leafId: string | null, lastSeq: number) => Promise<R>): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#withClient(doing, async (client) => {
          await client.query("BEGIN");
          try {
            const { leafId, lastSeq } = await this.#sessionRow(client, true);
            const result = await task(client, leafId, lastSeq);
            await client.query("COMMIT");
            return result;
          } catch (error) {
            await client.query("ROLLBACK").catch(() => undefined);
            throw error;
          }
        });
      } catch (error) {
        const cause = (error as { cause?: { code?: string; constraint?: string } }).cause;
        if (attempt < ID_COLLISION_ATTEMPTS && cause?.code === "23505" && cause.constraint === "entries_session_id_id_key") continue;
        throw error;
      }
    }
  }

  /** Inserts `entries` as seq lastSeq+1, ... and moves the session's leaf to the last one. */
  async #insert(client: pg.ClientBase, entries: readonly SessionEntry[], lastSeq: number): Promise<void> {
    const seqs: number[] = [];
    const ids: string[] = [];
    const parents: (string | null)[] = [];
    const types: string[] = [];
    const bodies: string[] = [];
    const texts: (string | null)[] = [];
    const wordLists: (string | null)[] = [];
    const facts = new Map<string, BranchFacts>();
    const outside = [...new Set(entries.map((entry) => entry.parentId).filter((id): id is string => id !== null && !entries.some((e) => e.id === id)))];
    for (const [id, found] of await this.#facts(client, outside)) facts.set(id, found.facts);
    const compactions: number[] = [];
    const newestCompactions: (string | null)[] = [];
    const newestKept: (string | null)[] = [];
    const autoCompacts: (boolean | null)[] = [];
    entries.forEach((entry, index) => {
      const own = nextFacts(entry.parentId === null ? NO_FACTS : (facts.get(entry.parentId) ?? NO_FACTS), entry);
      facts.set(entry.id, own);
      compactions.push(own.compactions);
      newestCompactions.push(own.newestCompactionId);
      newestKept.push(own.newestFirstKept);
      autoCompacts.push(own.autoCompact ?? null);
      const searchable = searchableText(entry);
      seqs.push(lastSeq + index + 1);
      ids.push(entry.id);
      parents.push(entry.parentId);
      types.push(entry.type);
      bodies.push(JSON.stringify(entry));
      texts.push(searchable?.literal ?? null);
      wordLists.push(searchable?.words ?? null);
    });
    await client.query(
      `INSERT INTO ${this.#schema}.entries
         (session_id, seq, id, parent_id, type, body, search_text, search_words, compactions, newest_compaction_id, newest_first_kept, auto_compact)
       SELECT $1, u.seq, u.id, u.parent_id, u.type, u.body::json, u.search_text, to_tsvector('simple', u.words), u.compactions, u.newest, u.kept, u.auto
         FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::text[], $11::text[], $12::boolean[])
           AS u(seq, id, parent_id, type, body, search_text, words, compactions, newest, kept, auto)`,
      [this.sessionId, seqs, ids, parents, types, bodies, texts, wordLists, compactions, newestCompactions, newestKept, autoCompacts],
    );
    const last = entries[entries.length - 1] as SessionEntry;
    await client.query(`UPDATE ${this.#schema}.sessions SET leaf_id = $2, last_seq = $3 WHERE id = $1`, [this.sessionId, last.id, lastSeq + entries.length]);
  }

  /** The stored seq and branch facts of the entries with these ids (those that exist). */
  async #facts(client: pg.ClientBase, ids: readonly string[]): Promise<Map<string, { readonly seq: number; readonly facts: BranchFacts }>> {
    const found = new Map<string, { readonly seq: number; readonly facts: BranchFacts }>();
    if (ids.length === 0) return found;
    const rows = (
      await client.query<FactsRow>(
        `SELECT id, seq, compactions, newest_compaction_id, newest_first_kept, auto_compact FROM ${this.#schema}.entries WHERE session_id = $1 AND id = ANY($2::text[])`,
        [this.sessionId, ids],
      )
    ).rows;
    for (const row of rows) found.set(row.id, { seq: Number(row.seq), facts: factsOf(row) });
    return found;
  }

  /**
   * The branch from `leafId` up its parents, as far as entries written at or after `fromSeq`
   * (a parent is always written before its child, so the walk can stop there), root-most first.
   */
  async #walk(client: pg.ClientBase, leafId: string, fromSeq: number): Promise<{ seq: number; id: string }[]> {
    const rows = (
      await client.query<{ seq: string; id: string }>(
        `WITH RECURSIVE walk (seq, id, parent_id) AS (
           SELECT seq, id, parent_id FROM ${this.#schema}.entries WHERE session_id = $1 AND id = $2
           UNION ALL
           -- Each step looks its parent up by (session_id, id) in scalar subqueries, which the
           -- planner cannot turn into a join (a join here may be planned as a scan of the
           -- session's entries at every step when the table's statistics are young).
           SELECT step.seq, step.id, step.parent_id FROM (
             SELECT w.parent_id AS id, w.seq AS child_seq,
                    (SELECT e.seq FROM ${this.#schema}.entries e WHERE e.session_id = $1 AND e.id = w.parent_id) AS seq,
                    (SELECT e.parent_id FROM ${this.#schema}.entries e WHERE e.session_id = $1 AND e.id = w.parent_id) AS parent_id
               FROM walk w WHERE w.parent_id IS NOT NULL
           ) step
           WHERE step.seq >= $3 AND step.seq < step.child_seq
         )
         SELECT seq, id FROM walk ORDER BY seq`,
        [this.sessionId, leafId, fromSeq],
      )
    ).rows;
    if (rows.length === 0) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `The leaf "${leafId}" of ${this.location} is not an entry of the session.`, {
        file: this.location,
        hint: "The rows were changed outside this store; restore them from a backup.",
      });
    }
    return rows.map((row) => ({ seq: Number(row.seq), id: row.id }));
  }
}
