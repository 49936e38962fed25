import { describe, expect, it } from "vitest";
import { QuickIds } from "./quick-ids.js";

const scan = (line: string) => {
  const quick = new QuickIds();
  return quick.match(Buffer.from(line)) ? { type: quick.type(), id: quick.id(), parentId: quick.parentId() } : undefined;
};

describe("QuickIds", () => {
  it("reads type, id and parentId from a line written the way pi writes entries", () => {
    expect(scan('{"type":"message","id":"a1b2c3d4","parentId":"99ff00aa","timestamp":"t","message":{}}')).toEqual({
      type: "message",
      id: "a1b2c3d4",
      parentId: "99ff00aa",
    });
  });

  it("reads a null or empty parentId as a root", () => {
    expect(scan('{"type":"label","id":"x","parentId":null,"timestamp":"t"}')?.parentId).toBeNull();
    expect(scan('{"type":"label","id":"x","parentId":"","timestamp":"t"}')?.parentId).toBeNull();
    expect(scan('{"type":"label","id":"x","parentId":null}')?.parentId).toBeNull();
  });

  it("does not match other key orders, escapes, non-ASCII ids or a damaged prefix", () => {
    for (const line of [
      '{"type":"custom","customType":"x","id":"a","parentId":null}',
      '{"id":"a","type":"message","parentId":null}',
      '{"type":"message","id":"a\\"b","parentId":null,',
      '{"type":"message","id":"ü1","parentId":null,',
      '{"type":"message","id":"","parentId":null,',
      '{"type":"message","id":"a","parentId":nul',
      '{"type":"message","id":"a","parentId":"b"x',
      ' {"type":"message","id":"a","parentId":null,',
    ]) {
      expect(scan(line)).toBeUndefined();
    }
  });

  it("compares the id without decoding it", () => {
    const quick = new QuickIds();
    expect(quick.match(Buffer.from('{"type":"message","id":"abc","parentId":null,'))).toBe(true);
    expect(quick.idIs("abc")).toBe(true);
    expect(quick.idIs("abd")).toBe(false);
    expect(quick.idIs("ab")).toBe(false);
    expect(quick.idIs(undefined)).toBe(false);
  });
});
