/** What a test expects to fail: the CompactionError a promise rejects with, or a TranscriptError thrown. */
import { CompactionError } from "../errors.js";
import { TranscriptError } from "../transcript/transcript-error.js";

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

/** The TranscriptError `fn` throws; fails the test if it returns or throws anything else. */
export function thrown(fn: () => unknown): TranscriptError {
  try {
    fn();
  } catch (error) {
    if (error instanceof TranscriptError) return error;
    throw error;
  }
  throw new Error("expected a TranscriptError");
}
