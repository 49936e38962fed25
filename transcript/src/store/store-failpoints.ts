/**
 * For tests that kill a process in the middle of a write: a call the stores make inside a
 * write (SQLite: inside the transaction, after the rows are inserted and before COMMIT; a pi
 * file: under the lock, before the line is written). Not exported from the package; a test
 * process imports this module's file from `dist/store/` and sets it, then kills itself or is
 * killed while it waits there.
 */
export const storeFailpoints: { beforeCommit?: ((location: string, call: string) => void) | undefined } = {};
