/**
 * Reading an entry line's `type`, `id` and `parentId` straight from its bytes, without parsing
 * the line, for the lines the boundary loader only needs to recognise.
 */

const TYPE_OPEN = Buffer.from('{"type":"');
const ID_OPEN = Buffer.from('","id":"');
const PARENT_OPEN = Buffer.from('","parentId":');
const NULL_BYTES = Buffer.from("null");

/**
 * Reads the id fields of a line without parsing it, when it starts the way pi writes entries:
 * `{"type":"…","id":"…","parentId":null|"…",` with plain ASCII strings (no escapes). Any other
 * line is not matched and gets parsed in full. One instance is reused for every line, and
 * nothing is decoded until asked for.
 */
export class QuickIds {
  #bytes: Buffer = Buffer.alloc(0);
  #typeEnd = 0;
  #idStart = 0;
  #idEnd = 0;
  #parentStart = -1;
  #parentEnd = -1;

  match(bytes: Buffer): boolean {
    if (!bytesAt(bytes, TYPE_OPEN, 0)) return false;
    const typeEnd = plainStringEnd(bytes, TYPE_OPEN.length);
    if (typeEnd < 0 || !bytesAt(bytes, ID_OPEN, typeEnd)) return false;
    const idStart = typeEnd + ID_OPEN.length;
    const idEnd = plainStringEnd(bytes, idStart);
    if (idEnd <= idStart || !bytesAt(bytes, PARENT_OPEN, idEnd)) return false;
    let p = idEnd + PARENT_OPEN.length;
    let parentStart = -1;
    let parentEnd = -1;
    if (bytesAt(bytes, NULL_BYTES, p)) {
      p += NULL_BYTES.length;
    } else if (bytes[p] === 0x22) {
      const end = plainStringEnd(bytes, p + 1);
      if (end < 0) return false;
      if (end > p + 1) [parentStart, parentEnd] = [p + 1, end]; // "" means root, as in pi
      p = end + 1;
    } else {
      return false;
    }
    if (bytes[p] !== 0x2c && bytes[p] !== 0x7d) return false; // "," or "}"
    this.#bytes = bytes;
    this.#typeEnd = typeEnd;
    this.#idStart = idStart;
    this.#idEnd = idEnd;
    this.#parentStart = parentStart;
    this.#parentEnd = parentEnd;
    return true;
  }

  id(): string {
    return this.#bytes.toString("latin1", this.#idStart, this.#idEnd);
  }

  /** Whether the id is `id`, without decoding it. */
  idIs(id: string | undefined): boolean {
    if (id === undefined || id.length !== this.#idEnd - this.#idStart) return false;
    for (let i = 0; i < id.length; i++) if (this.#bytes[this.#idStart + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  type(): string {
    return this.#bytes.toString("latin1", TYPE_OPEN.length, this.#typeEnd);
  }

  parentId(): string | null {
    return this.#parentStart < 0 ? null : this.#bytes.toString("latin1", this.#parentStart, this.#parentEnd);
  }
}

function bytesAt(bytes: Buffer, expected: Buffer, at: number): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** Index of the quote closing a string that starts at `from`, if it is short printable ASCII without escapes; else -1. */
function plainStringEnd(bytes: Buffer, from: number): number {
  const limit = Math.min(bytes.length, from + 256);
  for (let i = from; i < limit; i++) {
    const b = bytes[i] as number;
    if (b === 0x22) return i;
    if (b === 0x5c || b < 0x20 || b >= 0x80) return -1;
  }
  return -1;
}
