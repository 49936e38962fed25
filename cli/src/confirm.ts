/** Asking the user on the terminal: one line of text, or yes/no. */
import { createInterface } from "node:readline";
import type { CliIo } from "./io.js";

/** Writes `question` to stderr and reads one line from stdin ("" when stdin closes first). */
export async function askLine(io: CliIo, question: string): Promise<string> {
  io.stderr.write(question);
  const reader = createInterface({ input: io.stdin, terminal: false });
  try {
    return await new Promise<string>((resolve) => {
      reader.once("line", resolve);
      reader.once("close", () => resolve(""));
    });
  } finally {
    reader.close();
  }
}

/** Writes `question` to stderr and reads one line from stdin; true only for `y` or `yes`. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  return /^\s*y(es)?\s*$/i.test(await askLine(io, `${question} [y/N] `));
}
