/**
 * @compaction/store-postgres — sessions in a Postgres database: `openPostgresStore` returns the
 * session store contract (`EntryStore` of @compaction/transcript) over one session of a database
 * many workers share, with appends and conditional compactions in one order across processes and
 * `search` through Postgres full-text search.
 */
export { openPostgresStore, parsePostgresLocation, postgresLocation, PostgresStore, type PostgresStoreOptions } from "./postgres-store.js";
export { listPostgresSessions, type ListPostgresSessionsOptions, type PostgresSessionInfo } from "./list-sessions.js";
export { SCHEMA_VERSION } from "./schema.js";
