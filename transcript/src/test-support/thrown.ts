/** What a test expects to fail: the TranscriptError a function throws. */
import { TranscriptError } from "../transcript-error.js";

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
