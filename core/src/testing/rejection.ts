/** What a test expects to fail: the CompactionError a promise rejects with. */
import { CompactionError } from "../errors.js";

/** The CompactionError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<CompactionError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof CompactionError) return error;
    throw error;
  }
  throw new Error("expected the promise to reject with a CompactionError");
}
