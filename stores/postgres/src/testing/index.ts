/**
 * @compaction/store-postgres/testing — a real Postgres server for tests and benchmarks (see
 * `startPostgresServer`), on the binaries `node scripts/host-install.mjs postgres` installs.
 */
export {
  createDatabase,
  findPostgresBinaries,
  POSTGRES_INSTALL_COMMAND,
  type PostgresBinaries,
  type PostgresServer,
  startPostgresServer,
  type StartPostgresOptions,
} from "./postgres-server.js";
