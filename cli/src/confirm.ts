/** Asking the user yes/no on the terminal. */
import { createInterface } from "node:readline";
import type { CliIo } from "./io.js";

/** Writes `question` to stderr and reads one line from stdin; true only for `y` or `yes`. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  io.stderr.write(`${question} [y/N] `);
  const reader = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      reader.once("line", resolve);
      reader.once("close", () => resolve(""));
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    reader.close();
  }
}
